"""``site_report.json`` / ``site_report.md``: gold vs synthetic annotator on the private test set.

Only numbers and label names: the report may travel in the export bundle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from protocol import Corpus
from protocol.base import ProtocolModel
from protocol.evaluation import CorpusDiagnostics, EvaluationReport, LabelRecall, MissedShape
from shared.markdown import markdown_cell


class ModelScores(ProtocolModel):
    """Headline scores of one annotator on the site's test split."""

    token_precision: float
    token_recall: float
    token_f1: float
    exact_f1: float
    overlap_f1: float
    leakage_rate: float
    per_label: dict[str, LabelRecall] = Field(
        default_factory=dict, description="support, recall and leaked documents per gold label"
    )
    missed_shapes: tuple[MissedShape, ...] | None = Field(
        default=None,
        description="shapes of the test identifiers this annotator misses and the gold "
        "annotator catches (the synthetic annotator only; None for gold itself)",
    )
    missed_shapes_left_out: int = Field(
        default=0, ge=0, description="such identifiers in the rows past the table's cut"
    )


class SiteReport(ProtocolModel):
    """What synthetic data is worth at this site: the F1 gap and how the corpora differ."""

    site_id: str
    n_test_documents: int
    n_synthetic_documents: int
    gold: ModelScores
    synthetic: ModelScores
    token_f1_gap: float
    real_diagnostics: CorpusDiagnostics
    synthetic_diagnostics: CorpusDiagnostics
    settings: dict[str, Any]
    trained_on_corpus_sha256: str = ""  # SHA-256 of the audited corpus file trained on
    annotator_notes: tuple[str, ...] = ()  # stall restarts, sparse-PHI recipe, early stops


def headline(report: EvaluationReport) -> ModelScores:
    return ModelScores(
        token_precision=report.token.micro.precision,
        token_recall=report.token.micro.recall,
        token_f1=report.token.micro.f1,
        exact_f1=report.exact.micro.f1,
        overlap_f1=report.overlap.micro.f1,
        leakage_rate=report.leakage.leakage_rate,
    )


def diagnosed_scores(
    test: Corpus, predictions: Mapping[str, Corpus], evaluations: Mapping[str, EvaluationReport]
) -> dict[str, ModelScores]:
    """Each annotator's headline scores with its per-label recall; every annotator but
    ``gold`` also gets the shapes of the identifiers it misses that the gold annotator
    catches."""
    from shared.metrics.misses import label_recall, missed_shapes

    scores: dict[str, ModelScores] = {}
    for name, pred in predictions.items():
        update: dict[str, Any] = {"per_label": label_recall(test, pred)}
        if name != "gold":
            rows, left_out = missed_shapes(test, pred, reference=predictions["gold"])
            update |= {"missed_shapes": rows, "missed_shapes_left_out": left_out}
        scores[name] = headline(evaluations[name]).model_copy(update=update)
    return scores


def _row(name: str, scores: ModelScores) -> str:
    return (
        f"| {name} | {scores.token_precision:.3f} | {scores.token_recall:.3f} | "
        f"{scores.token_f1:.3f} | {scores.exact_f1:.3f} | {scores.overlap_f1:.3f} | "
        f"{scores.leakage_rate:.3f} |"
    )


def show_number(value: float | None) -> str:
    """Counts as integers (``29``), rates and means with three decimals, ``n/a`` if absent."""
    if value is None:
        return "n/a"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


def _diag_row(name: str, real: float | None, synthetic: float | None) -> str:
    return f"| {name} | {show_number(real)} | {show_number(synthetic)} |"


def _get(diag: dict[str, Any], *path: str) -> float | None:
    """The number at ``path`` (an int stays an int), or None."""
    value: Any = diag
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


DIAGNOSTIC_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("documents", ("n_documents",)),
    ("median words / document", ("words", "median")),
    ("spans / document (mean)", ("spans_per_document", "mean")),
    ("PII document share", ("pii_document_share",)),
    ("lexical diversity", ("lexical_diversity",)),
    ("PII docs with repeated identifier", ("pii_documents_with_repetition_share",)),
)


def render_markdown(report: SiteReport) -> str:
    """A short human-readable page for the site's data steward."""
    real = report.real_diagnostics.model_dump(mode="json")
    syn = report.synthetic_diagnostics.model_dump(mode="json")
    lines = [
        f"# Site report: {report.site_id}",
        "",
        f"Test documents: {report.n_test_documents}; synthetic documents: "
        f"{report.n_synthetic_documents}.",
        "",
        "| annotator trained on | token P | token R | token F1 | exact F1 | overlap F1 | leakage |",
        "|---|---|---|---|---|---|---|",
        _row("gold (real) data", report.gold),
        _row("synthetic data", report.synthetic),
        "",
        f"**Token F1 gap (gold - synthetic): {report.token_f1_gap:+.3f}**",
        "",
        *[f"- {note}" for note in report.annotator_notes],
        *([""] if report.annotator_notes else []),
        "| diagnostic | real train | synthetic |",
        "|---|---|---|",
    ]
    lines += [
        _diag_row(name, _get(real, *path), _get(syn, *path)) for name, path in DIAGNOSTIC_ROWS
    ]
    lines += ["", "| label | real span share | synthetic span share |", "|---|---|---|"]
    labels = sorted(set(real.get("labels", {})) | set(syn.get("labels", {})))
    lines += [
        _diag_row(
            label,
            _get(real, "labels", label, "span_share") or 0.0,
            _get(syn, "labels", label, "span_share") or 0.0,
        )
        for label in labels
    ]
    lines += ["", *per_label_table(report), "", *missed_shapes_table(report.synthetic)]
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    """``text`` as a code span in a table cell: literal, with its pipes escaped (GFM)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def per_label_table(report: SiteReport) -> list[str]:
    """Support, recall and leaked test documents per gold label, both annotators side by side."""
    gold, syn = report.gold.per_label, report.synthetic.per_label
    if not gold and not syn:
        return []  # a report written before the per-label figures
    lines = [
        "| label | test spans | gold recall | synthetic recall | gold leaked docs "
        "| synthetic leaked docs |",
        "|---|---|---|---|---|---|",
    ]
    for label in sorted(set(gold) | set(syn)):
        g, s = gold.get(label), syn.get(label)
        support = g.support if g is not None else s.support if s is not None else 0
        lines.append(
            f"| {markdown_cell(label)} | {support} | {show_number(g.recall if g else None)} | "
            f"{show_number(s.recall if s else None)} | "
            f"{show_number(g.leaked_documents if g else None)} | "
            f"{show_number(s.leaked_documents if s else None)} |"
        )
    return lines


def missed_shapes_table(scores: ModelScores) -> list[str]:
    """The shapes of the test identifiers the synthetic annotator misses and gold catches."""
    head = [
        "Test identifiers the synthetic annotator misses and the gold annotator catches, by "
        "shape (letters as X/x runs, digits as d; never the identifiers themselves):",
        "",
    ]
    if scores.missed_shapes is None:
        return []
    if not scores.missed_shapes:
        return [*head[:1], "none."]
    lines = [
        *head,
        "| label | shape | casing | length | position | missed |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {markdown_cell(r.label)} | {_code(r.shape)} | {r.casing} | {r.length} | {r.position} | "
        f"{r.count} |"
        for r in scores.missed_shapes
    ]
    if scores.missed_shapes_left_out:
        lines += ["", f"{scores.missed_shapes_left_out} more in rarer shapes, not listed."]
    return lines
