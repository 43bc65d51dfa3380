"""Corpus -> tokenised chunks with IOB2 labels, grouped into padded batches.

Tokenisation happens once per corpus (the "cache"): every epoch reuses the encoded chunks.
Chunks whose sub-tokens do not fit ``max_length`` are split again at word borders (never inside
a span), so nothing is truncated unless a single word or span alone is too long.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol import Corpus, Document, Span
from shared.ner_tokens import (
    IGNORE,
    TextChunk,
    chunk_document,
    decode_token_predictions,
    encode_token_labels,
    split_words,
    unchunk_spans,
    word_start_tokens,
)

if TYPE_CHECKING:
    import torch

TOKENIZE_BATCH = 256


@dataclass(frozen=True)
class EncodedChunk:
    """One chunk of document ``doc`` (its index in the corpus), tokenised."""

    doc: int
    chunk: TextChunk
    input_ids: list[int]
    offsets: list[tuple[int, int]]
    special: list[int]
    labels: list[int] | None = None

    def __len__(self) -> int:
        return len(self.input_ids)

    def word_starts(self) -> list[int]:
        """Token positions whose predicted tag decoding reads: the first token of each word."""
        words = split_words(self.chunk.text)
        return [p for p, _ in word_start_tokens(self.offsets, words, self.special)]

    @property
    def has_words(self) -> bool:
        return any(not s and b > a for (a, b), s in zip(self.offsets, self.special, strict=True))


def chunk_corpus(corpus: Corpus, chunk_words: int) -> list[tuple[int, TextChunk]]:
    """Every document's chunks, tagged with the document's index."""
    return [
        (index, chunk)
        for index, doc in enumerate(corpus.documents)
        for chunk in chunk_document(doc.text, doc.spans, chunk_words)
    ]


def encode_corpus(
    corpus: Corpus,
    tokenizer: Any,
    chunk_words: int,
    max_length: int,
    label2id: dict[str, int] | None = None,
) -> list[EncodedChunk]:
    """Chunk, tokenise and (when ``label2id`` is given) label every document of ``corpus``."""
    pending = chunk_corpus(corpus, chunk_words)
    encoded: list[EncodedChunk] = []
    while pending:
        too_long: list[tuple[int, TextChunk]] = []
        for doc, chunk, enc in _tokenize(tokenizer, pending, truncate=None):
            if len(enc["input_ids"]) > max_length and _splittable(chunk):
                too_long.append((doc, chunk))
            else:
                if len(enc["input_ids"]) > max_length:
                    enc = _tokenize(tokenizer, [(doc, chunk)], truncate=max_length)[0][2]
                encoded.append(_encoded(doc, chunk, enc, label2id))
        pending = [(doc, part) for doc, chunk in too_long for part in _halve(chunk)]
    encoded.sort(key=lambda e: (e.doc, e.chunk.start))
    return encoded


def _tokenize(
    tokenizer: Any, items: Sequence[tuple[int, TextChunk]], truncate: int | None
) -> list[tuple[int, TextChunk, dict[str, Any]]]:
    out = []
    for begin in range(0, len(items), TOKENIZE_BATCH):
        batch = items[begin : begin + TOKENIZE_BATCH]
        enc = tokenizer(
            [chunk.text for _, chunk in batch],
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
            truncation=truncate is not None,
            max_length=truncate,
        )
        for row, (doc, chunk) in enumerate(batch):
            out.append((doc, chunk, {key: enc[key][row] for key in enc}))
    return out


def _encoded(
    doc: int, chunk: TextChunk, enc: dict[str, Any], label2id: dict[str, int] | None
) -> EncodedChunk:
    offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
    special = list(enc["special_tokens_mask"])
    labels = None
    if label2id is not None:
        labels = encode_token_labels(offsets, chunk.text, chunk.spans, label2id, special)
    return EncodedChunk(doc, chunk, list(enc["input_ids"]), offsets, special, labels)


def _splittable(chunk: TextChunk) -> bool:
    return len(_halve(chunk)) > 1


def _halve(chunk: TextChunk) -> list[TextChunk]:
    """Split a chunk in two halves by words (span-safe), offsets kept document-relative."""
    words = max(1, len(split_words(chunk.text)) // 2)
    parts = chunk_document(chunk.text, chunk.spans, words)
    return [TextChunk(chunk.start + p.start, chunk.start + p.end, p.text, p.spans) for p in parts]


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, rng: random.Random, group: bool = True
) -> list[list[int]]:
    """Shuffled batches of indices; with ``group``, similar lengths share a batch.

    Grouping sorts within shuffled windows of 50 batches (as HF's length-grouped sampler does),
    so padding shrinks while the order stays random from epoch to epoch.
    """
    order = list(range(len(lengths)))
    rng.shuffle(order)
    if group:
        window = batch_size * 50
        order = [
            i
            for begin in range(0, len(order), window)
            for i in sorted(order[begin : begin + window], key=lambda i: -lengths[i])
        ]
    batches = [order[b : b + batch_size] for b in range(0, len(order), batch_size)]
    if group:
        rng.shuffle(batches)
    return batches


def collate(chunks: Sequence[EncodedChunk], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad a batch to its longest member (dynamic padding) as torch tensors."""
    import torch

    width = max(len(c) for c in chunks)
    ids = torch.full((len(chunks), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(chunks), width), dtype=torch.long)
    labels = torch.full((len(chunks), width), IGNORE, dtype=torch.long)
    for row, chunk in enumerate(chunks):
        n = len(chunk)
        ids[row, :n] = torch.tensor(chunk.input_ids)
        mask[row, :n] = 1
        if chunk.labels is not None:
            labels[row, :n] = torch.tensor(chunk.labels)
    batch = {"input_ids": ids, "attention_mask": mask}
    if any(c.labels is not None for c in chunks):
        batch["labels"] = labels
    return batch


def predicted_documents(
    corpus: Corpus,
    chunks: Sequence[EncodedChunk],
    predictions: Sequence[Sequence[int]],
    id2label: dict[int, str],
) -> tuple[Document, ...]:
    """``corpus``'s documents with spans decoded from per-token predictions on its chunks.

    Chunks never cut a span and decoded spans stay inside their chunk, so the re-offset spans
    of one document never overlap; documents without predicted chunks get no spans.
    """
    per_doc: dict[int, list[tuple[TextChunk, list[Span]]]] = defaultdict(list)
    for chunk, pred in zip(chunks, predictions, strict=True):
        spans = decode_token_predictions(
            chunk.chunk.text, chunk.offsets, pred, id2label, chunk.special
        )
        per_doc[chunk.doc].append((chunk.chunk, spans))
    return tuple(
        Document(
            id=doc.id,
            text=doc.text,
            spans=tuple(unchunk_spans(per_doc.get(index, []))),
            source=doc.source,
            meta=doc.meta,
        )
        for index, doc in enumerate(corpus.documents)
    )
