"""The site report page: the F1 gap and the diagnostics of both corpora."""

from __future__ import annotations

from protocol import Corpus, Document, Span
from site_agent.train_synthetic.report import ModelScores, SiteReport, render_markdown


def _real(n: int) -> Corpus:
    """``n`` notes, each naming one person (a PII span)."""
    text = "Note about Ana."
    span = Span(start=text.index("Ana"), end=text.index("Ana") + 3, label="PER")
    return Corpus(documents=tuple(Document(id=f"d{i}", text=text, spans=(span,)) for i in range(n)))


def test_site_report_markdown_shows_the_gap() -> None:
    from shared.metrics import corpus_diagnostics

    gold = ModelScores(
        token_precision=0.9, token_recall=0.8, token_f1=0.85, exact_f1=0.8, overlap_f1=0.9,
        leakage_rate=0.1,
    )  # fmt: skip
    syn = gold.model_copy(update={"token_f1": 0.6})
    real = corpus_diagnostics(_real(4), language="en")
    plain = Corpus(documents=(Document(id="x", text="no names here at all"),), labels=("PER",))
    report = SiteReport(
        site_id="h1", n_test_documents=5, n_synthetic_documents=1, gold=gold, synthetic=syn,
        token_f1_gap=0.25, real_diagnostics=real,
        synthetic_diagnostics=corpus_diagnostics(plain, language="en"), settings={},
    )  # fmt: skip
    text = render_markdown(report)
    assert "Token F1 gap (gold - synthetic): +0.250" in text
    assert "| PER | 1.000 | 0.000 |" in text
    assert "| documents | 4 | 1 |" in text  # counts as integers, not 4.000
    assert "| PII document share | 1.000 | 0.000 |" in text
    assert "stalled" not in text

    note = "gold annotator: stalled on predicting only O and was restarted 1 time(s)"
    noted = render_markdown(report.model_copy(update={"annotator_notes": (note,)}))
    assert f"- {note}" in noted


def test_a_report_written_before_the_diagnosis_still_reads_and_renders() -> None:
    """Issue 49's fields default to empty: an older site_report.json validates, and its page
    has no per-label or missed-shape table."""
    import json

    from shared.metrics import corpus_diagnostics

    scores = {
        "token_precision": 0.9, "token_recall": 0.8, "token_f1": 0.85, "exact_f1": 0.8,
        "overlap_f1": 0.9, "leakage_rate": 0.1,
    }  # fmt: skip
    diagnostics = corpus_diagnostics(_real(2), language="en").model_dump(mode="json")
    old = {
        "site_id": "h1", "n_test_documents": 2, "n_synthetic_documents": 2, "gold": scores,
        "synthetic": scores, "token_f1_gap": 0.0, "real_diagnostics": diagnostics,
        "synthetic_diagnostics": diagnostics, "settings": {},
    }  # fmt: skip
    report = SiteReport.model_validate_json(json.dumps(old))
    assert report.synthetic.per_label == {} and report.synthetic.missed_shapes is None
    page = render_markdown(report)
    assert "Token F1 gap" in page and "synthetic recall" not in page and "by shape" not in page


def test_labels_and_shapes_from_the_data_stay_inert_in_the_tables() -> None:
    """Labels are data: a pipe or HTML in one cannot open a cell or a tag; a shape's pipe is
    escaped inside its code span."""
    from protocol.evaluation import LabelRecall, MissedShape
    from shared.metrics import corpus_diagnostics

    label = "Fecha|<b>x</b>"
    row = LabelRecall(support=2, recall=0.5, leaked_documents=1)
    shape = MissedShape(
        label=label, shape="X|d", casing="upper", length="1-3", position="body", count=1
    )
    scores = ModelScores(
        token_precision=1.0, token_recall=1.0, token_f1=1.0, exact_f1=1.0, overlap_f1=1.0,
        leakage_rate=0.0, per_label={label: row},
    )  # fmt: skip
    diagnostics = corpus_diagnostics(_real(1), language="en")
    report = SiteReport(
        site_id="h1", n_test_documents=1, n_synthetic_documents=1, gold=scores,
        synthetic=scores.model_copy(update={"missed_shapes": (shape,)}), token_f1_gap=0.0,
        real_diagnostics=diagnostics, synthetic_diagnostics=diagnostics, settings={},
    )  # fmt: skip
    page = render_markdown(report)
    assert "| Fecha\\|&lt;b&gt;x&lt;/b&gt; | 2 | 0.500 | 0.500 | 1 | 1 |" in page
    assert "| Fecha\\|&lt;b&gt;x&lt;/b&gt; | `X\\|d` | upper | 1-3 | body | 1 |" in page
    assert "<b>" not in page
