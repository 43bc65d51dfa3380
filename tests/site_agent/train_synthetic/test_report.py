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
