"""Refuse to export a degenerate synthetic corpus (issue 15): a corpus without PII spans, or
one whose synthetic-trained encoder learnt nothing, passes the privacy audit trivially, and
would be signed and shipped as if it were useful.

The checks read only the audited corpus and the numbers of ``site_report.json``; a site that
must send such a corpus anyway (a smoke run) gives a reason in ``[export]
accept_degenerate``, and the reason and the findings go into the signed manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

from protocol import Corpus
from protocol.export import QualityOverride
from shared.errors import ExportRefusedError
from site_agent.export.settings import ExportSettings


def synthetic_token_f1(site_report: Path | None) -> float | None:
    """The synthetic encoder's token F1 from ``site_report.json``; None when not reported."""
    if site_report is None or not site_report.is_file():
        return None
    try:
        value = json.loads(site_report.read_text(encoding="utf-8"))["synthetic"]["token_f1"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def degenerate_findings(
    corpus: Corpus, site_report: Path | None, settings: ExportSettings
) -> list[str]:
    """What makes the corpus degenerate, one finding per failed check (empty: none)."""
    n_docs = len(corpus.documents)
    n_spans = sum(len(doc.spans) for doc in corpus.documents)
    with_pii = sum(1 for doc in corpus.documents if doc.spans)
    findings = []
    if n_docs == 0:
        findings.append("the audited corpus has no documents")
    if n_spans < settings.min_spans:
        findings.append(f"{n_spans} PII spans (min_spans = {settings.min_spans})")
    if n_docs and with_pii / n_docs < settings.min_pii_document_share:
        findings.append(
            f"{with_pii} of {n_docs} documents hold PII "
            f"(min_pii_document_share = {settings.min_pii_document_share:g})"
        )
    f1 = synthetic_token_f1(site_report)
    if f1 is not None and f1 < settings.min_synthetic_token_f1:
        findings.append(
            f"the synthetic-trained encoder scores token F1 {f1:.3f} on the test split "
            f"(min_synthetic_token_f1 = {settings.min_synthetic_token_f1:g})"
        )
    return findings


def check_quality(
    corpus: Corpus, site_report: Path | None, settings: ExportSettings
) -> QualityOverride | None:
    """None for a sound corpus; the override to record when the site accepted a degenerate
    one; otherwise refuse."""
    findings = degenerate_findings(corpus, site_report, settings)
    if not findings:
        return None
    reason = settings.accept_degenerate.strip()
    if not reason:
        raise ExportRefusedError(
            "export refused: the synthetic corpus is degenerate: "
            + "; ".join(findings)
            + ". fix: generate more or better data (more adaptation steps, a larger amount, "
            'a better annotator), or set [export] accept_degenerate = "<why>" to export it '
            "anyway (recorded in the signed manifest)"
        )
    return QualityOverride(findings=tuple(findings), reason=reason)
