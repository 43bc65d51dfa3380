"""Small corpora written by hand or drawn by hypothesis, for the metric tests."""

from __future__ import annotations

from hypothesis import strategies as st

from protocol import Corpus, Document, Span
from shared.metrics.pairing import DocumentPair

SpanTuple = tuple[int, int, str]

FILLER = "Juan Pérez-Gil vive en Madrid, 28016; tel. 600123456 y ve a Ana. " * 2


def doc(spans: list[SpanTuple], doc_id: str = "d1", text: str = FILLER) -> Document:
    return Document(
        id=doc_id, text=text, spans=tuple(Span(start=s, end=e, label=lab) for s, e, lab in spans)
    )


def corpus(*docs: Document) -> Corpus:
    return Corpus(documents=tuple(docs))


def pair(gold: list[SpanTuple], pred: list[SpanTuple], text: str = FILLER) -> DocumentPair:
    return DocumentPair(doc(gold, text=text), doc(pred, text=text).spans)


@st.composite
def span_lists(draw: st.DrawFn, length: int = len(FILLER), labels: str = "AB") -> list[SpanTuple]:
    """Sorted, non-overlapping spans inside ``[0, length)`` (consecutive cut points paired)."""
    cuts = sorted(draw(st.sets(st.integers(0, length), max_size=12)))
    bounds = list(zip(cuts[0::2], cuts[1::2], strict=False))
    return [(s, e, draw(st.sampled_from(labels))) for s, e in bounds]


@st.composite
def corpus_pairs(draw: st.DrawFn, max_docs: int = 4) -> tuple[Corpus, Corpus]:
    """A gold corpus and a prediction corpus on the same texts, with random spans."""
    n = draw(st.integers(1, max_docs))
    gold = [doc(draw(span_lists()), f"d{k}") for k in range(n)]
    pred = [doc(draw(span_lists()), f"d{k}") for k in range(n)]
    return corpus(*gold), corpus(*pred)
