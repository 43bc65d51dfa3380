"""Rich tables of diagnostics and evaluation results, for the terminal."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from protocol.evaluation import (
    ConfidenceInterval,
    CorpusDiagnostics,
    Distribution,
    EvaluationReport,
    MatchScores,
)


def _spread(d: Distribution) -> str:
    return f"{d.median:g} [{d.q1:g}-{d.q3:g}]"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def diagnostics_table(diag: CorpusDiagnostics, title: str = "Corpus diagnostics") -> Table:
    """One row per diagnostic: size, lengths, PII share, structure, diversity."""
    table = Table(title=title, show_header=True)
    table.add_column("diagnostic")
    table.add_column("value", justify="right")
    rows = [
        ("documents", str(diag.n_documents)),
        ("spans", str(diag.n_spans)),
        ("PII-bearing documents", f"{diag.n_pii_documents} ({_pct(diag.pii_document_share)})"),
        ("words per document, median [IQR]", _spread(diag.words)),
        ("characters per document, median [IQR]", _spread(diag.chars)),
        ("spans per PII document, median [IQR]", _spread(diag.spans_per_pii_document)),
        ("person labels", escape(", ".join(diag.person_labels)) or "-"),
        ("PII documents without a person label", _pct(diag.pii_documents_without_person_share)),
        ("PII documents repeating an identifier", _pct(diag.pii_documents_with_repetition_share)),
    ]
    if diag.lexical_diversity is not None:
        rows.append(
            (
                f"lexical diversity ({diag.language}, {diag.n_word_tokens} words)",
                f"{diag.lexical_diversity:.4f} "
                f"(per document {diag.mean_document_lexical_diversity or 0.0:.4f})",
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    return table


def label_table(diag: CorpusDiagnostics) -> Table:
    """Span count and share per label, and the share of PII documents containing it."""
    table = Table(title="Labels")
    for column in ("label", "spans", "% of spans", "% of PII documents"):
        table.add_column(column, justify="left" if column == "label" else "right")
    for label, row in diag.labels.items():
        shares = _pct(row.span_share), _pct(row.pii_document_share)
        table.add_row(escape(label), str(row.spans), *shares)
    return table


def _ci(intervals: dict[str, ConfidenceInterval], key: str) -> str:
    ci = intervals.get(key)
    return f"[{ci.low:.4f}, {ci.high:.4f}]" if ci else "-"


def summary_table(report: EvaluationReport) -> Table:
    """Micro and macro scores per criterion, and leakage, with bootstrap intervals."""
    table = Table(title=f"Evaluation ({report.n_documents} documents)")
    for column in ("metric", "precision", "recall", "F1", "F1 95% CI", "macro F1"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    criteria: list[MatchScores] = [report.token, report.exact, report.overlap]
    for scores in criteria:
        micro = scores.micro
        table.add_row(
            f"{scores.criterion} (micro)",
            f"{micro.precision:.4f}",
            f"{micro.recall:.4f}",
            f"{micro.f1:.4f}",
            _ci(report.confidence_intervals, f"{scores.criterion}.micro.f1"),
            f"{scores.macro.f1:.4f}",
        )
    return table


def leakage_table(report: EvaluationReport) -> Table:
    """Leaking documents over all and over PII-bearing documents, in both views."""
    leak = report.leakage
    table = Table(title="Document-level leakage")
    for column in ("view", "leaked", "rate", "rate 95% CI", "rate (PII docs)"):
        table.add_column(column, justify="left" if column == "view" else "right")
    table.add_row(
        "label-consistent",
        f"{leak.leaked_documents}/{leak.n_documents}",
        _pct(leak.leakage_rate),
        _ci(report.confidence_intervals, "leakage.rate"),
        _pct(leak.leakage_rate_pii),
    )
    table.add_row(
        "label-agnostic",
        f"{leak.label_agnostic_leaked_documents}/{leak.n_documents}",
        _pct(leak.label_agnostic_leakage_rate),
        _ci(report.confidence_intervals, "leakage.label_agnostic_rate"),
        _pct(leak.label_agnostic_leakage_rate_pii),
    )
    return table


def per_label_table(scores: MatchScores) -> Table:
    """Per-label precision, recall, F1 and support under one criterion."""
    table = Table(title=f"Per label ({scores.criterion} match)")
    for column in ("label", "precision", "recall", "F1", "support"):
        table.add_column(column, justify="left" if column == "label" else "right")
    for label, row in scores.per_label.items():
        scores_text = (f"{row.precision:.4f}", f"{row.recall:.4f}", f"{row.f1:.4f}")
        table.add_row(escape(label), *scores_text, str(row.support))
    return table
