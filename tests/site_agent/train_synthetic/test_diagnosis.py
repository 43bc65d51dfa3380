"""The site report's diagnosis on a planted case: the synthetic corpus writes dates with
slashes only, the real notes and the test notes also with dots; the annotator trained on the
synthetic notes misses the dotted dates and the report says so by shape, label and position,
with the counts worked out by hand, and with no test identifier in site_report.json or .md.

The two "annotators" are tiny pattern lexicons learned from their training corpora (a digit
matches any digit, everything else itself): a full encoder training per case would be too slow
for a test, and the diagnosis only reads their predictions. One check of the real pipeline's
report is in tests/site_agent/pipeline/test_full_pipeline.py.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Corpus, Document, Span
from protocol.evaluation import LabelRecall, MissedShape
from shared.metrics import corpus_diagnostics, evaluate
from site_agent.train_synthetic.report import SiteReport, diagnosed_scores, render_markdown

Segment = tuple[str, str | None]  # text, and its label when it is an identifier


def note(doc_id: str, *segments: Segment) -> Document:
    text, spans = "", []
    for piece, label in segments:
        if label is not None:
            spans.append(Span(start=len(text), end=len(text) + len(piece), label=label))
        text += piece
    return Document(id=doc_id, text=text, spans=tuple(spans))


def letter(doc_id: str, header_date: str, name: str, dates: list[str]) -> Document:
    """A letter of 8 non-blank lines: 2 header lines, a salutation, 3 body lines, 2 signature
    lines; every date is labelled ``fecha``, the name ``Nombre-Sujeto``."""
    body: list[Segment] = []
    for date in dates:
        body += [("Visita del ", None), (date, "fecha"), (".\n", None)]
    body += [("Sin cambios.\n", None)] * (3 - len(dates))
    return note(
        doc_id,
        ("Hospital Central, ", None), (header_date, "fecha"), ("\nServicio de Urgencias\n", None),
        ("Estimado Dr. ", None), (name, "Nombre-Sujeto"), (":\n", None),
        *body,
        ("Un saludo,\nDr. Sanz\n", None),
    )  # fmt: skip


def learn(corpus: Corpus) -> dict[str, set[str]]:
    """Per label, the patterns of its training surfaces (each digit matches any digit)."""
    patterns: dict[str, set[str]] = {}
    for doc in corpus.documents:
        for span in doc.spans:
            surface = doc.text[span.start : span.end]
            pattern = "".join(r"\d" if c.isdigit() else re.escape(c) for c in surface)
            patterns.setdefault(span.label, set()).add(pattern)
    return patterns


def annotate(lexicon: dict[str, set[str]], corpus: Corpus) -> Corpus:
    docs = []
    for doc in corpus.documents:
        found = sorted(
            (m.start(), m.end(), label)
            for label, patterns in lexicon.items()
            for pattern in patterns
            for m in re.finditer(rf"(?<!\w){pattern}(?!\w)", doc.text)
        )
        spans, end = [], 0
        for start, stop, label in found:
            if start >= end:
                spans.append(Span(start=start, end=stop, label=label))
                end = stop
        docs.append(Document(id=doc.id, text=doc.text, spans=tuple(spans)))
    return Corpus(documents=tuple(docs))


REAL = Corpus(
    documents=(
        letter("r0", "01/02/2003", "Ruiz", ["04.05.2006"]),
        letter("r1", "07.08.2009", "Sanz", ["10/11/2012", "13.01.2014"]),
    )
)
SYNTHETIC = Corpus(
    documents=(
        letter("s0", "21/02/2023", "Ruiz", ["24/05/2026"]),
        letter("s1", "27/08/2029", "Sanz", []),
    )
)
TEST = Corpus(
    documents=(
        letter("t0", "18.09.2017", "Ruiz", ["19/10/2018", "20.11.2019"]),  # two dotted
        letter("t1", "22/12/2021", "Sanz", ["23.01.2022"]),  # one dotted, in the body
        letter("t2", "25/02/2024", "Olmo", []),  # a name neither lexicon knows
    )
)


def site_report(test: Corpus, real: Corpus, synthetic: Corpus) -> SiteReport:
    predictions = {
        "gold": annotate(learn(real), test),
        "synthetic": annotate(learn(synthetic), test),
    }
    evaluations = {name: evaluate(test, pred) for name, pred in predictions.items()}
    scores = diagnosed_scores(test, predictions, evaluations)
    return SiteReport(
        site_id="h1", n_test_documents=len(test), n_synthetic_documents=len(synthetic),
        gold=scores["gold"], synthetic=scores["synthetic"],
        token_f1_gap=scores["gold"].token_f1 - scores["synthetic"].token_f1,
        real_diagnostics=corpus_diagnostics(real, language="es"),
        synthetic_diagnostics=corpus_diagnostics(synthetic, language="es"), settings={},
    )  # fmt: skip


def surfaces(corpus: Corpus) -> set[str]:
    return {d.text[s.start : s.end] for d in corpus.documents for s in d.spans}


def test_the_planted_dotted_dates_are_reported_as_missed_by_shape_and_position() -> None:
    report = site_report(TEST, REAL, SYNTHETIC)
    # by hand: 6 test dates (3 dotted: t0's header and body, t1's body), 3 names (Olmo unknown)
    assert report.gold.per_label == {
        "fecha": LabelRecall(support=6, recall=1.0, leaked_documents=0),
        "Nombre-Sujeto": LabelRecall(support=3, recall=2 / 3, leaked_documents=1),
    }
    assert report.synthetic.per_label == {
        "fecha": LabelRecall(support=6, recall=3 / 6, leaked_documents=2),
        "Nombre-Sujeto": LabelRecall(support=3, recall=2 / 3, leaked_documents=1),
    }
    dotted = {"label": "fecha", "shape": "dd.dd.dddd", "casing": "none", "length": "8-15"}
    assert report.synthetic.missed_shapes == (
        MissedShape(**dotted, position="body", count=2),
        MissedShape(**dotted, position="header", count=1),
    )
    assert report.gold.missed_shapes is None
    page = render_markdown(report)
    assert "| fecha | 6 | 1.000 | 0.500 | 0 | 2 |" in page
    assert "| Nombre-Sujeto | 3 | 0.667 | 0.667 | 1 | 1 |" in page
    assert "| fecha | `dd.dd.dddd` | none | 8-15 | body | 2 |" in page
    assert "| fecha | `dd.dd.dddd` | none | 8-15 | header | 1 |" in page
    written = report.model_dump_json(indent=2) + page
    assert not [s for s in surfaces(TEST) if s in written]


def test_a_synthetic_corpus_with_every_shape_misses_nothing_gold_catches() -> None:
    report = site_report(TEST, REAL, REAL)
    assert report.synthetic.missed_shapes == ()
    assert "and the gold annotator catches" in render_markdown(report)


@st.composite
def dates(draw: st.DrawFn) -> tuple[str, bool]:
    """A date written with dots or slashes, and whether it has dots."""
    day, month = draw(st.integers(1, 28)), draw(st.integers(1, 12))
    year, dots = draw(st.integers(1950, 2030)), draw(st.booleans())
    sep = "." if dots else "/"
    return f"{day:02d}{sep}{month:02d}{sep}{year}", dots


@st.composite
def drawn_test_splits(draw: st.DrawFn) -> tuple[Corpus, int, int]:
    """Test notes with drawn dates, the number of dotted dates in bodies and in headers."""
    docs, in_body, in_header = [], 0, 0
    for k in range(draw(st.integers(1, 5))):
        header, header_dots = draw(dates())
        body = draw(st.lists(dates(), max_size=3))
        in_header += header_dots
        in_body += sum(dots for _, dots in body)
        name = draw(st.sampled_from(["Ruiz", "Sanz"]))
        docs.append(letter(f"t{k}", header, name, [d for d, _ in body]))
    return Corpus(documents=tuple(docs)), in_body, in_header


@settings(max_examples=25, deadline=None)
@given(drawn_test_splits())
def test_every_dotted_date_of_a_drawn_test_split_is_counted(
    drawn: tuple[Corpus, int, int],
) -> None:
    test, in_body, in_header = drawn
    report = site_report(test, REAL, SYNTHETIC)
    counts = {row.position: row.count for row in report.synthetic.missed_shapes or ()}
    assert counts == {k: v for k, v in {"body": in_body, "header": in_header}.items() if v}
    assert {row.shape for row in report.synthetic.missed_shapes or ()} <= {"dd.dd.dddd"}
    n_dates = sum(1 for d in test.documents for s in d.spans if s.label == "fecha")
    assert report.synthetic.per_label["fecha"].recall == (n_dates - in_body - in_header) / n_dates
    written = report.model_dump_json() + render_markdown(report)
    assert not [s for s in surfaces(test) if s in written]
