"""Hypothesis strategies: small random corpora of a few words, some of them gold spans."""

from __future__ import annotations

from hypothesis import strategies as st

from protocol import Document, Span

WORDS = st.sampled_from(["de", "la", "Paciente", "dolor", "años", "70", "Núñez", "ríñon", "x"])


@st.composite
def documents(draw: st.DrawFn, prefix: str, max_docs: int = 5) -> list[Document]:
    docs = []
    for i in range(draw(st.integers(1, max_docs))):
        words: list[str] = draw(st.lists(WORDS, max_size=18))
        text = " ".join(words)
        spans: tuple[Span, ...] = ()
        labelled: bool = draw(st.booleans())
        if words and labelled:
            k = draw(st.integers(0, len(words) - 1))
            start = sum(len(w) + 1 for w in words[:k])
            spans = (Span(start=start, end=start + len(words[k]), label="NOMBRE"),)
        docs.append(Document(id=f"{prefix}{i}", text=text, spans=spans))
    return docs


CORPORA = st.tuples(documents("r"), documents("s"))


@st.composite
def named_documents(
    draw: st.DrawFn, prefix: str, max_docs: int = 4, labels: tuple[str, ...] = ("NOMBRE",)
) -> list[Document]:
    """Documents whose spans cover one to three whole words (at most two spans each), each
    span of one of ``labels``."""
    docs = []
    for i in range(draw(st.integers(1, max_docs))):
        words: list[str] = draw(st.lists(WORDS, min_size=1, max_size=16))
        starts = [sum(len(w) + 1 for w in words[:k]) for k in range(len(words) + 1)]
        spans, k = [], draw(st.integers(0, len(words) - 1))
        while k < len(words) and len(spans) < 2 and draw(st.booleans()):
            last = min(len(words), k + draw(st.integers(1, 3)))
            label = draw(st.sampled_from(labels))
            spans.append(Span(start=starts[k], end=starts[last] - 1, label=label))
            k = last + draw(st.integers(1, 3))
        docs.append(Document(id=f"{prefix}{i}", text=" ".join(words), spans=tuple(spans)))
    return docs
