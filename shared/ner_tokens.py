"""Character spans <-> word-level IOB2 labels on sub-word tokens, and 128-word chunking.

Why this module exists: encoder NER models see sub-word tokens in windows of limited length,
while corpora carry exact character offsets. Everything here is exact in characters:

* **Words** are runs of word characters (``\\w+``) or runs of other non-space characters
  (``[^\\w\\s]+``), with character offsets. Punctuation is therefore its own word, so that a
  span such as ``Madrid`` in ``Madrid.`` stays word-aligned.
* **Chunks** partition a document into consecutive character ranges of at most ``max_words``
  words (seed 000 §3.4: 128-word chunks for training and machine annotation). A chunk border
  never falls strictly inside a span: it moves back to the span's start, or, when one span is
  itself longer than ``max_words`` words and starts the chunk, forward to its end. Spans are
  re-offset into the chunk and back, so nothing is lost or shifted.
* **IOB2 on tokens**: the first sub-token of a word carries the word's tag (``B-X`` for the
  first word of a span, ``I-X`` for the rest, ``O`` outside); continuation sub-tokens and special
  tokens get ``IGNORE`` (-100) so that the loss and the metrics count each word once, the usual
  choice for BERT-style NER. Decoding reads each word's tag from its first token, merges B/I
  runs, and snaps span ends to word boundaries.

No ML imports: tokenizers are duck-typed (any HF *fast* tokenizer output with
``offset_mapping``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from protocol import Span

IGNORE = -100
OUTSIDE = "O"
WORD_PATTERN = re.compile(r"\w+|[^\w\s]+")


@dataclass(frozen=True)
class TextChunk:
    """One window of a document: ``text == document.text[start:end]``; spans are relative."""

    start: int
    end: int
    text: str
    spans: tuple[Span, ...] = ()


def split_words(text: str) -> list[tuple[int, int]]:
    """Character ranges ``(start, end)`` of the words of ``text`` (see module docstring)."""
    return [m.span() for m in WORD_PATTERN.finditer(text)]


def _border_after(text: str, begin: int, max_words: int) -> int:
    """Start of the first word past ``max_words`` words from ``begin``, or the text's end."""
    for index, match in enumerate(WORD_PATTERN.finditer(text, begin)):
        if index == max_words:
            return match.start()
    return len(text)


def chunk_document(text: str, spans: Sequence[Span] = (), max_words: int = 128) -> list[TextChunk]:
    """Split ``text`` into chunks of at most ``max_words`` words that never cut a span.

    The chunks cover the whole text (leading and trailing whitespace included), so
    ``"".join(c.text for c in chunks) == text``. A chunk holds more than ``max_words`` words
    only when it starts with a single span that is longer than that.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    starts = [s.start for s in ordered]
    borders = [0]
    while borders[-1] < len(text):
        begin = borders[-1]
        border = _border_after(text, begin, max_words)
        inside = bisect.bisect_left(starts, border) - 1
        if inside >= 0 and ordered[inside].start < border < ordered[inside].end:
            cut = ordered[inside]
            border = cut.start if cut.start > begin else cut.end
        borders.append(border)
    if len(borders) == 1:
        borders.append(len(text))
    return [_make_chunk(text, ordered, a, b) for a, b in itertools.pairwise(borders)]


def _make_chunk(text: str, spans: Sequence[Span], start: int, end: int) -> TextChunk:
    inner = tuple(
        Span(start=s.start - start, end=s.end - start, label=s.label)
        for s in spans
        if start <= s.start and s.end <= end
    )
    return TextChunk(start=start, end=end, text=text[start:end], spans=inner)


def unchunk_spans(chunks: Iterable[tuple[TextChunk, Iterable[Span]]]) -> list[Span]:
    """Document-level spans from (chunk, chunk-relative spans) pairs."""
    return [
        Span(start=s.start + chunk.start, end=s.end + chunk.start, label=s.label)
        for chunk, spans in chunks
        for s in spans
    ]


def iob2_labels(entity_labels: Iterable[str]) -> list[str]:
    """The tag set ``["O", "B-X", "I-X", ...]`` for the given entity labels, sorted."""
    tags = [OUTSIDE]
    for label in sorted(set(entity_labels)):
        tags += [f"B-{label}", f"I-{label}"]
    return tags


def word_tags(words: Sequence[tuple[int, int]], spans: Sequence[Span]) -> list[str]:
    """The IOB2 tag of each word: the span it overlaps (first one wins), else ``O``."""
    tags = [OUTSIDE] * len(words)
    ends = [end for _, end in words]
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        started = False
        for index in range(bisect.bisect_right(ends, span.start), len(words)):
            if words[index][0] >= span.end:
                break
            if tags[index] == OUTSIDE:
                tags[index] = f"{'I' if started else 'B'}-{span.label}"
                started = True
    return tags


def token_words(
    offsets: Sequence[tuple[int, int]],
    words: Sequence[tuple[int, int]],
    special: Sequence[int] | None = None,
) -> list[int | None]:
    """For each token, the index of the first word it overlaps (``None`` for special/empty)."""
    result: list[int | None] = []
    word = 0
    for position, (start, end) in enumerate(offsets):
        if end <= start or (special is not None and special[position]):
            result.append(None)
            continue
        while word < len(words) and words[word][1] <= start:
            word += 1
        hit = word if word < len(words) and words[word][0] < end else None
        result.append(hit)
    return result


def encode_token_labels(
    offsets: Sequence[tuple[int, int]],
    text: str,
    spans: Sequence[Span],
    label2id: dict[str, int],
    special: Sequence[int] | None = None,
) -> list[int]:
    """Label ids per token: the word's tag on its first sub-token, ``IGNORE`` elsewhere."""
    words = split_words(text)
    tags = word_tags(words, spans)
    labels = [IGNORE] * len(offsets)
    for position, word in word_start_tokens(offsets, words, special):
        labels[position] = label2id[tags[word]]
    return labels


def word_start_tokens(
    offsets: Sequence[tuple[int, int]],
    words: Sequence[tuple[int, int]],
    special: Sequence[int] | None = None,
) -> list[tuple[int, int]]:
    """``(token position, word index)`` of each word's first token: the tokens that carry tags."""
    starts: list[tuple[int, int]] = []
    for position, word in enumerate(token_words(offsets, words, special)):
        if word is not None and (not starts or word > starts[-1][1]):
            starts.append((position, word))
    return starts


def decode_token_predictions(
    text: str,
    offsets: Sequence[tuple[int, int]],
    predictions: Sequence[int],
    id2label: dict[int, str],
    special: Sequence[int] | None = None,
) -> list[Span]:
    """Spans from per-token predicted label ids, snapped to word boundaries.

    A word takes the tag predicted on the first token that overlaps it; a word that shares its
    first token with the previous word continues that word's entity. Words past the last token
    (truncation) are ``O``.
    """
    words = split_words(text)
    tags = [OUTSIDE] * len(words)
    owner: list[int | None] = [None] * len(words)
    for position, word in enumerate(token_words(offsets, words, special)):
        if word is None:
            continue
        for index in _covered_words(words, word, offsets[position][1]):
            if owner[index] is None:
                owner[index] = position
                tag = id2label[int(predictions[position])]
                if index != word and tag.startswith("B-"):
                    tag = "I-" + tag[2:]
                tags[index] = tag
    return tags_to_spans(words, tags)


def _covered_words(words: Sequence[tuple[int, int]], first: int, token_end: int) -> range:
    last = first
    while last + 1 < len(words) and words[last + 1][0] < token_end:
        last += 1
    return range(first, last + 1)


def tags_to_spans(words: Sequence[tuple[int, int]], tags: Sequence[str]) -> list[Span]:
    """Merge IOB2 word tags into spans; an ``I-X`` that does not continue an X starts one.

    A tag without a ``B-``/``I-`` prefix (IO scheme, e.g. a foreign model's ``PER``) reads as
    ``I-``, so runs of it become one span.
    """
    spans: list[Span] = []
    current: tuple[int, int, str] | None = None
    for (start, end), tag in zip(words, tags, strict=True):
        kind, label = _split_tag(tag)
        if current is not None and kind == "I" and label == current[2]:
            current = (current[0], end, label)
            continue
        if current is not None:
            spans.append(Span(start=current[0], end=current[1], label=current[2]))
        current = (start, end, label) if kind in ("B", "I") else None
    if current is not None:
        spans.append(Span(start=current[0], end=current[1], label=current[2]))
    return spans


def _split_tag(tag: str) -> tuple[str, str]:
    if tag == OUTSIDE:
        return "O", ""
    if tag[:2] in ("B-", "I-"):
        return tag[0], tag[2:]
    return "I", tag
