"""The export gate: only the exact corpus file a passing audit covered may leave the site.

This check always runs; there is no option that skips it. When the audit package provides
its own gate (``require_passing_audit``) that runs too, so both must agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from protocol.audit import AuditReport
from shared.errors import ExportRefusedError
from shared.provenance import sha256_file


def _audit_gate() -> Callable[[Path, Path], AuditReport] | None:
    try:
        module = importlib.import_module("site_agent.audit")
    except ModuleNotFoundError as exc:
        if exc.name not in {"site_agent.audit"}:
            raise
        return None
    gate = getattr(module, "require_passing_audit", None)
    return gate if callable(gate) else None


def assert_audited(corpus_path: Path, report_path: Path | None) -> AuditReport:
    """The audit report for ``corpus_path``; refuse unless it passed and covers this file."""
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
    gate = _audit_gate()
    if gate is not None:
        report = gate(corpus_path, report_path)
    return report
