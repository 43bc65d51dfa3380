"""Stage 9, export: signed bundles, built behind the audit gate, and their verification."""

from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.export.gate import assert_audited
from site_agent.export.settings import ExportSettings
from site_agent.export.verify import verify_bundle

__all__ = ["BundleRequest", "ExportSettings", "assert_audited", "build_bundle", "verify_bundle"]
