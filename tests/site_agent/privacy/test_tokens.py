"""The numpy word tokenizer equals the character-by-character definition, offsets included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Document, Span
from site_agent.privacy import reference
from site_agent.privacy.grams import iter_ngrams, ngrams_of
from site_agent.privacy.tokens import word_hash, word_stream

ALPHABET = st.sampled_from(
    [*list("abcXYZ019 ñÑáÉüç.,;:¿?¡!«»-_/\n\t"), "İ", "ẞ", "😀", "́", "\xa0", "ﬁ", "٣"]
)
TEXTS = st.lists(st.text(ALPHABET, max_size=40), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(TEXTS, st.integers(4, 64))
def test_word_hashes_equal_reference_words(texts: list[str], chunk: int) -> None:
    docs = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
    stream = word_stream(docs, chunk_chars=chunk)
    for d, text in enumerate(texts):
        expected = [word_hash(w) for w in reference.words(text)]
        assert stream.doc_tokens(d).tolist() == expected


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.text(ALPHABET, min_size=1, max_size=40), st.data())
def test_pii_flags_mark_words_overlapping_gold_spans(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    doc = Document(id="d", text=text, spans=(Span(start=start, end=end, label="X"),))
    stream = word_stream([doc], with_pii=True)
    expected = [ws < end and start < we for _, ws, we in reference.word_spans(text)]
    assert stream.in_pii is not None
    assert stream.in_pii.tolist() == expected


def test_words_are_case_insensitive_and_punctuation_free() -> None:
    docs = [Document(id="a", text="Hola, SEÑOR Núñez!"), Document(id="b", text="hola señor núñez")]
    stream = word_stream(docs)
    assert stream.doc_tokens(0).tolist() == stream.doc_tokens(1).tolist()
    assert stream.lengths.tolist() == [3, 3]


def test_ngrams_never_cross_documents() -> None:
    docs = [Document(id="a", text="uno dos"), Document(id="b", text="tres cuatro cinco")]
    stream = word_stream(docs)
    pieces = list(iter_ngrams(stream, 2))
    assert np.concatenate([p.docs for p in pieces]).tolist() == [0, 1, 1]
    expected = np.concatenate([ngrams_of(stream.doc_tokens(d), 2) for d in range(2)])
    assert np.concatenate([p.hashes for p in pieces]).tolist() == expected.tolist()


def test_spans_without_tokens_give_zero_shares() -> None:
    from site_agent.privacy.grams import window_shares

    doc = Document(id="d", text="uno dos ... tres", spans=(Span(start=8, end=11, label="X"),))
    stream = word_stream([doc], with_pii=True)
    assert stream.in_pii is not None and not stream.in_pii.any()
    assert window_shares(stream, np.array([0, 1]), 2).tolist() == [0.0, 0.0]
