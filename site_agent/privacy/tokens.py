"""Corpora as flat arrays of 64-bit token hashes, so that every measure is numpy over integers.

Two units are supported. **Words** (always): maximal runs of letters, marks and digits
(Unicode categories L*, M*, N*) of the lower-cased text; corpora from different generators
compare on words. **Tokens** (optional): the ids of the generator's own fast tokenizer, as in
the n-gram recall of the source paper. The word tokenizer works on UTF-8 bytes with numpy and
never builds Python strings per word, which is what makes the 100k-document audit fast;
:func:`reference_words` is the obviously-correct definition it is tested against.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from protocol import Span

U64 = np.uint64
_LENGTH_SALT = U64(0x9E3779B97F4A7C15)
_CHUNK_CHARS = 4_000_000


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every output bit depends on every input bit (uint64 in/out)."""
    x = x ^ (x >> U64(30))
    x = x * U64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> U64(27))
    x = x * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


class HasText(Protocol):
    """What the word tokenizer reads: a text and its gold spans (a Document fits)."""

    @property
    def text(self) -> str: ...

    @property
    def spans(self) -> Sequence[Span]: ...


@dataclass(frozen=True)
class _PlainText:
    text: str
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True)
class TokenStream:
    """Every token of a corpus, concatenated; ``doc_offsets[d]:doc_offsets[d+1]`` is doc d.

    Real corpora only: ``pii_span`` names the gold PII span each token overlaps (numbered
    within the stream, -1 for none) and ``pii_chars`` counts the characters of it the token
    holds; ``in_pii`` marks the tokens with a span. Spans are assumed not to overlap (a
    Document's are checked); where they do, a token counts towards the last span that starts
    before its end.
    """

    hashes: np.ndarray
    doc_offsets: np.ndarray
    pii_span: np.ndarray | None = None
    pii_chars: np.ndarray | None = None

    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.hashes)

    @functools.cached_property
    def lengths(self) -> np.ndarray:
        return np.diff(self.doc_offsets)

    @functools.cached_property
    def doc_of_token(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_docs, dtype=np.int32), self.lengths)

    def doc_tokens(self, doc: int) -> np.ndarray:
        return self.hashes[self.doc_offsets[doc] : self.doc_offsets[doc + 1]]

    @functools.cached_property
    def in_pii(self) -> np.ndarray | None:
        """Tokens that overlap a gold PII span (``None`` for a stream without spans)."""
        return None if self.pii_span is None else self.pii_span >= 0

    @functools.cached_property
    def span_chars(self) -> np.ndarray:
        """Characters of each span held by the stream's tokens (its whole, in this unit)."""
        if self.pii_span is None or self.pii_chars is None:
            return np.zeros(0, dtype=np.int64)
        held = self.pii_span >= 0
        total = np.bincount(self.pii_span[held], weights=self.pii_chars[held])
        return total.astype(np.int64)


@dataclass(frozen=True)
class SpanHits:
    """For every token of a chunk: the gold span it overlaps (chunk-local number, -1 for none)
    and how many of that span's characters it holds."""

    span: np.ndarray
    chars: np.ndarray
    n_spans: int


def span_hits(
    token_lo: np.ndarray,
    token_hi: np.ndarray,
    span_lo: np.ndarray,
    span_hi: np.ndarray,
    char_prefix: np.ndarray | None = None,
) -> SpanHits:
    """Match tokens ``[token_lo, token_hi)`` with sorted, non-overlapping spans
    ``[span_lo, span_hi)`` (same offsets); ``char_prefix[i]`` counts characters before offset
    i when offsets are bytes (``None``: offsets are characters)."""
    k = np.searchsorted(span_lo, token_hi, side="left") - 1
    safe = np.maximum(k, 0)
    lo = np.maximum(token_lo, span_lo[safe]) if len(span_lo) else token_lo
    hi = np.minimum(token_hi, span_hi[safe]) if len(span_lo) else token_lo
    hit = (k >= 0) & (hi > lo)
    width = hi - lo if char_prefix is None else char_prefix[hi] - char_prefix[np.minimum(lo, hi)]
    return SpanHits(
        span=np.where(hit, k, -1).astype(np.int32),
        chars=np.where(hit, width, 0).astype(np.int32),
        n_spans=len(span_lo),
    )


def lower_keep_length(text: str) -> str:
    """Lower-case ``text`` without changing its length, so character offsets stay valid."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


@functools.cache
def _is_word_codepoint(cp: int) -> bool:
    return unicodedata.category(chr(cp))[0] in "LMN"


def is_word_char(char: str) -> bool:
    """The word-character rule of the word unit: a letter, a mark or a digit."""
    return _is_word_codepoint(ord(char))


def reference_words(text: str) -> list[str]:
    """The words of ``text``, one character at a time: the oracle for :func:`word_stream`."""
    words, current = [], []
    for char in lower_keep_length(text):
        if is_word_char(char):
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


_ASCII_WORD = np.zeros(256, dtype=bool)
for _c in b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _ASCII_WORD[_c] = True


@functools.cache
def _bmp_word_table() -> np.ndarray:
    """The word-character rule for every code point of the Basic Multilingual Plane."""
    return np.array([_is_word_codepoint(cp) for cp in range(0x10000)], dtype=bool)


def _word_codepoints(cps: np.ndarray) -> np.ndarray:
    table = _bmp_word_table()
    word = table[np.minimum(cps, 0xFFFF)]
    astral = np.flatnonzero(cps > 0xFFFF)
    word[astral] = [_is_word_codepoint(int(cp)) for cp in cps[astral]]
    return word


def word_bytes(data: np.ndarray) -> np.ndarray:
    """True for every byte that belongs to a word character (UTF-8 input)."""
    flags = _ASCII_WORD[data]
    leads = np.flatnonzero(data >= 0xC0)
    if not leads.size:
        return flags
    last = len(data) - 1
    b0 = data[leads].astype(np.int64)
    b1 = data[np.minimum(leads + 1, last)].astype(np.int64) & 0x3F
    b2 = data[np.minimum(leads + 2, last)].astype(np.int64) & 0x3F
    b3 = data[np.minimum(leads + 3, last)].astype(np.int64) & 0x3F
    width = 2 + (b0 >= 0xE0) + (b0 >= 0xF0)
    cps = np.where(
        width == 2,
        ((b0 & 0x1F) << 6) | b1,
        np.where(
            width == 3,
            ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
            ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3,
        ),
    )
    word = _word_codepoints(cps)
    for k in range(4):
        chosen = word & (width > k)
        flags[leads[chosen] + k] = True
    return flags


_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=U64)


def _hash_words(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hash of the bytes ``data[s:e]`` of every word, read eight bytes at a time through an
    overlapping little-endian uint64 view (most words take a single step)."""
    padded = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
    view = np.ndarray(shape=(len(data) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    lengths = ends - starts
    hashes = lengths.astype(U64) * _LENGTH_SALT
    longest = int(lengths.max()) if len(lengths) else 0
    for step in range(0, longest, 8):
        chosen = np.flatnonzero(lengths > step) if step else np.arange(len(lengths))
        block = view[starts[chosen] + step] & _MASKS[np.minimum(lengths[chosen] - step, 8)]
        hashes[chosen] = mix64(hashes[chosen] ^ block)
    return mix64(hashes + U64(0x632BE59BD9B4E019))


def _char_to_byte(text: str, encoded: bytes) -> np.ndarray | None:
    """Byte offset of every character offset (``None`` when the text is ASCII)."""
    if len(encoded) == len(text):
        return None
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    width = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
    return np.concatenate([[0], np.cumsum(width)])


def _span_bytes(
    docs: Sequence[HasText],
    lowered: list[str],
    encoded: list[bytes],
    starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The gold spans' byte ranges in the joined chunk (in order): starts and ends."""
    ranges: list[tuple[int, int]] = []
    for doc, text, raw, base in zip(docs, lowered, encoded, starts, strict=True):
        if not doc.spans:
            continue
        to_byte = _char_to_byte(text, raw)
        for span in doc.spans:
            lo, hi = (
                (span.start, span.end)
                if to_byte is None
                else (to_byte[span.start], to_byte[span.end])
            )
            ranges.append((int(base + lo), int(base + hi)))
    bounds = np.asarray(ranges, dtype=np.int64).reshape(-1, 2)
    return bounds[:, 0], bounds[:, 1]


def chunked(docs: Sequence[HasText], limit: int) -> Iterator[Sequence[HasText]]:
    begin, size = 0, 0
    for index, doc in enumerate(docs):
        size += len(doc.text) + 1
        if size >= limit:
            yield docs[begin : index + 1]
            begin, size = index + 1, 0
    if begin < len(docs):
        yield docs[begin:]


def text_stream(texts: Sequence[str]) -> TokenStream:
    """The word stream of plain strings (one "document" per string)."""
    return word_stream([_PlainText(t) for t in texts])


def word_stream(
    docs: Sequence[HasText], *, with_pii: bool = False, chunk_chars: int = _CHUNK_CHARS
) -> TokenStream:
    """Hash every word of ``docs`` (see the module docstring for what a word is)."""
    hashes: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    hits: list[SpanHits] = []
    for chunk in chunked(docs, chunk_chars):
        lowered = [lower_keep_length(d.text) for d in chunk]
        encoded = [t.encode("utf-8", "surrogatepass") for t in lowered]
        data = np.frombuffer(b"\n".join(encoded), dtype=np.uint8)
        doc_starts = np.concatenate([[0], np.cumsum([len(e) + 1 for e in encoded])[:-1]])
        edges = np.diff(word_bytes(data).view(np.int8), prepend=np.int8(0), append=np.int8(0))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        hashes.append(_hash_words(data, starts, ends))
        owner = np.searchsorted(doc_starts, starts, side="right") - 1
        counts.append(np.bincount(owner, minlength=len(chunk)))
        if with_pii:
            span_lo, span_hi = _span_bytes(chunk, lowered, encoded, doc_starts)
            leads = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80, dtype=np.int64)])
            hits.append(span_hits(starts, ends, span_lo, span_hi, leads))
    return assemble(hashes, counts, hits if with_pii else None)


def _joined_hits(hits: Sequence[SpanHits]) -> tuple[np.ndarray, np.ndarray]:
    """One numbering of the spans of consecutive chunks; their tokens' hits concatenated."""
    spans, chars, base = [np.zeros(0, np.int32)], [np.zeros(0, np.int32)], 0
    for part in hits:
        spans.append(np.where(part.span >= 0, part.span + base, -1).astype(np.int32))
        chars.append(part.chars)
        base += part.n_spans
    return np.concatenate(spans), np.concatenate(chars)


def assemble(
    hashes: list[np.ndarray],
    counts: list[np.ndarray],
    hits: list[SpanHits] | None = None,
) -> TokenStream:
    offsets = np.zeros(sum(len(c) for c in counts) + 1, dtype=np.int64)
    if counts:
        np.cumsum(np.concatenate(counts), out=offsets[1:])
    pii_span, pii_chars = _joined_hits(hits) if hits is not None else (None, None)
    return TokenStream(
        hashes=np.concatenate(hashes) if hashes else np.zeros(0, dtype=U64),
        doc_offsets=offsets,
        pii_span=pii_span,
        pii_chars=pii_chars,
    )


def concat_streams(parts: Sequence[TokenStream]) -> TokenStream:
    """One stream from streams of consecutive runs of documents."""
    if len(parts) == 1:
        return parts[0]
    offsets = [parts[0].doc_offsets]
    for part in parts[1:]:
        offsets.append(part.doc_offsets[1:] + offsets[-1][-1])
    hits = None
    if all(p.pii_span is not None and p.pii_chars is not None for p in parts):
        hits = [
            SpanHits(p.pii_span, p.pii_chars, int(p.pii_span.max(initial=-1)) + 1)  # type: ignore[arg-type,union-attr]
            for p in parts
        ]
    pii_span, pii_chars = _joined_hits(hits) if hits is not None else (None, None)
    return TokenStream(
        hashes=np.concatenate([p.hashes for p in parts]),
        doc_offsets=np.concatenate(offsets),
        pii_span=pii_span,
        pii_chars=pii_chars,
    )


def word_hash(word: str) -> int:
    """The hash :func:`word_stream` gives ``word`` (one word, already lower-cased)."""
    data = np.frombuffer(word.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return int(_hash_words(data, np.array([0]), np.array([len(data)]))[0])
