"""The export gate: only the exact corpus file a passing audit covered may leave the site.

This check always runs; there is no option that skips it. The audit package's gate
(``require_passing_audit``) runs too, bound to the site's own files and policy: it recomputes
every hash the report names and re-derives the verdict from the site policy, so a report of
another audit (other real text, other thresholds, edited figures) cannot clear an export.
Without the audit package nothing can be re-derived, so nothing leaves.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.audit import AuditReport
from shared.errors import ExportRefusedError
from shared.provenance import sha256_file

if TYPE_CHECKING:
    from site_agent.audit.binding import AuditBinding


def _audit_gate() -> Callable[[Path, Path, AuditBinding], AuditReport]:
    try:
        module = importlib.import_module("site_agent.audit")
    except ModuleNotFoundError as exc:
        if exc.name not in {"site_agent.audit"}:
            raise
        module = None
    gate = getattr(module, "require_passing_audit", None)
    if not callable(gate):
        raise ExportRefusedError(
            "the privacy audit package (site_agent.audit) is not installed, so the audit "
            "cannot be checked against this site's data; fix: install the full toolkit"
        )
    return gate


def assert_audited(
    corpus_path: Path, report_path: Path | None, binding: AuditBinding
) -> AuditReport:
    """The audit report for ``corpus_path``; refuse unless it passed, covers this file, and
    is this site's audit of ``binding``'s files under its policy."""
    if report_path is None or not report_path.exists():
        raise ExportRefusedError(
            f"no audit report for {corpus_path}: nothing leaves the site without a passing "
            "privacy audit; fix: run the audit stage (site-agent synthesize --from audit)"
        )
    report = AuditReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    if not report.passed:
        raise ExportRefusedError(
            f"{report_path}: the privacy audit failed rule(s) {list(report.failed_rules)}; "
            "fix: regenerate or tighten filtering, then re-run the audit"
        )
    actual = sha256_file(corpus_path)
    if actual != report.audited_corpus_sha256:
        raise ExportRefusedError(
            f"{corpus_path}: SHA-256 {actual[:16]}... is not the audited corpus "
            f"{report.audited_corpus_sha256[:16]}... named in {report_path}; "
            "fix: export the corpus file the audit wrote, or re-run the audit"
        )
    return _audit_gate()(corpus_path, report_path, binding)
