"""The export gate: no corpus leaves the site unless a passing audit covers its exact bytes.

There is deliberately no way to skip this check. Each refusal names the rule that failed:

- ``audit_report_present``: there is no ``audit.json`` next to the corpus (or where given);
- ``audit_report_valid``: the report cannot be read, or its verdict contradicts its rules;
- the names of the failing policy rules, when the audit did not pass;
- ``audited_corpus_hash``: the corpus changed after it was audited (stale report);
- with an :class:`AuditBinding` (the export always gives one), the rules of
  ``site_agent.audit.binding``: the report must be this site's audit of this run's files,
  its verdict re-derived from the site policy.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from protocol.audit import AuditReport
from shared.errors import ExportRefusedError
from shared.provenance import sha256_file
from site_agent.audit.binding import AuditBinding, check_binding, check_seal
from site_agent.audit.report import AUDIT_JSON


def _refuse(rule: str, message: str, fix: str) -> ExportRefusedError:
    return ExportRefusedError(f"export refused by rule {rule!r}: {message}; fix: {fix}")


def _load(audit_json_path: Path) -> AuditReport:
    if not audit_json_path.is_file():
        raise _refuse(
            "audit_report_present",
            f"no audit report at {audit_json_path}",
            "run `site-agent audit --real TRAIN --synthetic SYNTH --out DIR` and export "
            f"DIR/{AUDIT_JSON} with the corpus it wrote",
        )
    try:
        report = AuditReport.model_validate_json(audit_json_path.read_text(encoding="utf-8"))
    except (ValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _refuse(
            "audit_report_valid",
            f"{audit_json_path} is not a valid audit report ({exc})",
            "re-run the audit",
        ) from exc
    if not report.rules:
        raise _refuse(
            "audit_report_valid",
            f"{audit_json_path} checks no rules, so it cannot clear anything",
            "audit with a policy that has rules (the default policy does)",
        )
    if report.passed != all(r.passed for r in report.rules):
        raise _refuse(
            "audit_report_valid",
            f"{audit_json_path}: the verdict does not follow from its rules",
            "re-run the audit; do not edit audit.json by hand",
        )
    return report


def require_passing_audit(
    corpus_path: Path, audit_json_path: Path | None = None, binding: AuditBinding | None = None
) -> AuditReport:
    """The report that clears ``corpus_path`` for export; raises ExportRefusedError otherwise.

    ``audit_json_path`` defaults to ``audit.json`` in the corpus's folder. ``binding`` names
    the site's own files and policy; without it only the report's self-consistency is checked.
    """
    corpus_path = Path(corpus_path)
    report_path = Path(audit_json_path) if audit_json_path else corpus_path.parent / AUDIT_JSON
    report = _load(report_path)
    if binding is not None:
        check_seal(report_path, report, binding)
    if not report.passed:
        failing = ", ".join(report.failed_rules)
        details = "; ".join(r.explanation for r in report.rules if not r.passed)
        raise _refuse(
            failing,
            f"the audit failed rule(s) {failing} ({details})",
            "regenerate or filter more strictly, then audit again",
        )
    if not corpus_path.is_file():
        raise _refuse(
            "audited_corpus_hash", f"no corpus file at {corpus_path}", "export the audited corpus"
        )
    actual = sha256_file(corpus_path)
    if actual != report.audited_corpus_sha256:
        raise _refuse(
            "audited_corpus_hash",
            f"{corpus_path} (sha256 {actual[:16]}…) is not the corpus the audit passed "
            f"(sha256 {report.audited_corpus_sha256[:16]}…): the report is stale",
            "export the synthetic.audited.jsonl the audit wrote, or audit this file",
        )
    if binding is not None:
        check_binding(report, corpus_path, binding)
    return report
