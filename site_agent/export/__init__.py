"""Signed export bundles: build (behind the audit gate) and verify."""

from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.export.gate import assert_audited
from site_agent.export.verify import verify_bundle

__all__ = ["BundleRequest", "assert_audited", "build_bundle", "verify_bundle"]
