"""Chunking keeps every span exactly; IOB2 encode -> decode round-trips word-aligned spans."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import PreTrainedTokenizerFast

from protocol import Span
from shared.ner_tokens import (
    IGNORE,
    chunk_document,
    decode_token_predictions,
    encode_token_labels,
    iob2_labels,
    split_words,
    tags_to_spans,
    unchunk_spans,
    word_tags,
)
from tests.tiny_models import tiny_tokenizer

ALPHABET = "abcxyzÁéñü019 .,:/-@\n\t"
LABELS = ("NAME", "DATE", "ID")


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[Span]]:
    """Random text and random non-overlapping character spans (not necessarily word-aligned)."""
    text = draw(st.text(alphabet=ALPHABET, max_size=300))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=20))))
    spans = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        if end > start:
            spans.append(Span(start=start, end=end, label=draw(st.sampled_from(LABELS))))
    return text, spans


def _is_single_long_span(chunk_text: str, spans: tuple[Span, ...]) -> bool:
    return len(spans) == 1 and spans[0].start == 0 and spans[0].end == len(chunk_text)


@settings(max_examples=300, deadline=None)
@given(data=text_and_spans(), max_words=st.integers(1, 9))
def test_chunk_unchunk_preserves_every_span(data: tuple[str, list[Span]], max_words: int) -> None:
    text, spans = data
    chunks = chunk_document(text, spans, max_words=max_words)
    assert "".join(c.text for c in chunks) == text
    assert [c.start for c in chunks[1:]] == [c.end for c in chunks[:-1]]
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        if len(split_words(chunk.text)) > max_words:
            assert _is_single_long_span(chunk.text, chunk.spans)
        for span in chunk.spans:
            assert 0 <= span.start < span.end <= len(chunk.text)
    restored = unchunk_spans((c, c.spans) for c in chunks)
    assert [(s.start, s.end, s.label) for s in restored] == [
        (s.start, s.end, s.label) for s in sorted(spans, key=lambda s: s.start)
    ]
    surfaces = [text[s.start : s.end] for s in restored]
    assert surfaces == [text[s.start : s.end] for s in sorted(spans, key=lambda s: s.start)]


def test_chunk_border_moves_before_a_span() -> None:
    text = "a b c d e f"
    spans = [Span(start=4, end=9, label="NAME")]  # "c d e"
    chunks = chunk_document(text, spans, max_words=3)
    assert [c.text for c in chunks] == ["a b ", "c d e ", "f"]
    assert chunks[1].spans == (Span(start=0, end=5, label="NAME"),)


def test_a_span_longer_than_a_chunk_gets_its_own_chunk() -> None:
    text = "x " + " ".join(["w"] * 10) + " y"
    spans = [Span(start=2, end=2 + 19, label="ID")]
    chunks = chunk_document(text, spans, max_words=4)
    assert [c.text for c in chunks] == ["x ", text[2:21], " y"]
    assert len(split_words(chunks[1].text)) == 10


def test_128_word_chunks_on_long_text() -> None:
    rng = random.Random(0)
    words = [rng.choice(["Juan", "12/03/2016", "Madrid", "el", "paciente,"]) for _ in range(1000)]
    text = " ".join(words)
    chunks = chunk_document(text, [], max_words=128)
    counts = [len(split_words(c.text)) for c in chunks]
    assert max(counts) == 128 and sum(counts) == len(split_words(text))


def test_empty_text_is_one_empty_chunk() -> None:
    assert [c.text for c in chunk_document("", [])] == [""]


def test_words_split_punctuation_from_word_characters() -> None:
    text = "Dr. Pérez, 12/03/2016."
    assert [text[a:b] for a, b in split_words(text)] == [
        "Dr", ".", "Pérez", ",", "12", "/", "03", "/", "2016", ".",
    ]  # fmt: skip


def test_word_tags_and_back() -> None:
    text = "Juan Pérez vive en Madrid ."
    words = split_words(text)
    spans = [Span(start=0, end=10, label="NAME"), Span(start=19, end=25, label="LOC")]
    tags = word_tags(words, spans)
    assert tags == ["B-NAME", "I-NAME", "O", "O", "B-LOC", "O"]
    assert tags_to_spans(words, tags) == spans


def test_adjacent_spans_of_one_label_stay_apart() -> None:
    text = "Ana Luis"
    words = split_words(text)
    spans = [Span(start=0, end=3, label="NAME"), Span(start=4, end=8, label="NAME")]
    assert word_tags(words, spans) == ["B-NAME", "B-NAME"]
    assert tags_to_spans(words, word_tags(words, spans)) == spans


def test_io_tags_without_prefix_become_spans() -> None:
    words = split_words("Ana Gil vino")
    assert tags_to_spans(words, ["PER", "PER", "O"]) == [Span(start=0, end=7, label="PER")]


def test_stray_inside_tag_starts_a_span() -> None:
    words = split_words("a b c")
    assert tags_to_spans(words, ["O", "I-ID", "I-NAME"]) == [
        Span(start=2, end=3, label="ID"),
        Span(start=4, end=5, label="NAME"),
    ]


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    return tiny_tokenizer(["Juan Pérez nació el 12/03/2016 en Madrid, calle Mayor 5."])


VOCAB = ["Juan", "Pérez", "12/03/2016", "Madrid,", "zzqx", "calle", "Mayor", "5.", "el", "año"]


@st.composite
def word_aligned(draw: st.DrawFn) -> tuple[str, list[Span]]:
    """Text of vocabulary words and spans that start and end on word boundaries."""
    tokens = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=25))
    seps = draw(st.lists(st.sampled_from([" ", "  ", "\n"]), min_size=len(tokens)))
    text = "".join(t + s for t, s in zip(tokens, seps, strict=False))
    words = split_words(text)
    picks = sorted(set(draw(st.lists(st.integers(0, len(words) - 1), max_size=10))))
    spans = []
    for first, last in zip(picks[::2], picks[1::2], strict=False):
        label = draw(st.sampled_from(LABELS))
        spans.append(Span(start=words[first][0], end=words[last][1], label=label))
    return text, spans


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=word_aligned(), noise=st.randoms())
def test_iob2_encode_decode_round_trip(
    tokenizer: PreTrainedTokenizerFast, data: tuple[str, list[Span]], noise: random.Random
) -> None:
    text, spans = data
    tags = iob2_labels(LABELS)
    label2id = {t: i for i, t in enumerate(tags)}
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    offsets, special = enc["offset_mapping"], enc["special_tokens_mask"]
    labels = encode_token_labels(offsets, text, spans, label2id, special)
    assert len(labels) == len(enc["input_ids"])
    assert all(lab == IGNORE for lab, sp in zip(labels, special, strict=True) if sp)
    assert sum(lab != IGNORE for lab in labels) == len(split_words(text))
    # continuation sub-tokens are ignored, so whatever is predicted there must not matter
    predicted = [noise.randrange(len(tags)) if lab == IGNORE else lab for lab in labels]
    decoded = decode_token_predictions(text, offsets, predicted, dict(enumerate(tags)), special)
    assert decoded == sorted(spans, key=lambda s: s.start)


def test_decode_snaps_to_word_boundaries(tokenizer: PreTrainedTokenizerFast) -> None:
    text = "Juan Pérez vive"
    tags = iob2_labels(["NAME"])
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    words = split_words(text)
    # predict B-NAME on every token of the first word only, even its continuation sub-tokens
    predicted = [
        1 if (not sp and s < words[0][1]) else 0
        for (s, _), sp in zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True)
    ]
    spans = decode_token_predictions(
        text, enc["offset_mapping"], predicted, dict(enumerate(tags)), enc["special_tokens_mask"]
    )
    assert spans == [Span(start=0, end=4, label="NAME")]


def test_truncated_tail_words_are_outside(tokenizer: PreTrainedTokenizerFast) -> None:
    text = "Juan " * 50
    tags = iob2_labels(["NAME"])
    enc = tokenizer(
        text, return_offsets_mapping=True, return_special_tokens_mask=True, truncation=True,
        max_length=8,
    )  # fmt: skip
    predicted = [1] * len(enc["input_ids"])
    spans = decode_token_predictions(
        text, enc["offset_mapping"], predicted, dict(enumerate(tags)), enc["special_tokens_mask"]
    )
    assert len(spans) == 6 and spans[-1].end <= len(text)
