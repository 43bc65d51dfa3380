"""The generator's own tokens as a :class:`TokenStream` (n-gram recall "as in the paper").

The ids of a Hugging Face fast tokenizer (no special tokens) are hashed like words, and a
token is marked as PII when its character offsets overlap a gold span. The tokenizer is
loaded from a local folder only (:func:`load_tokenizer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from protocol import Document
from shared.errors import ConfigError
from shared.safe_models import from_pretrained
from site_agent.privacy.tokens import (
    U64,
    SpanHits,
    TokenStream,
    assemble,
    mix64,
    span_hits,
    word_stream,
)

Unit = Literal["words", "tokens"]

_TOKEN_SALT = U64(0xD6E8FEB86659FD93)


def load_tokenizer(path: str | Path) -> Any:
    """A Hugging Face *fast* tokenizer from a local folder (never from the hub)."""
    from transformers import AutoTokenizer

    try:
        tokenizer = from_pretrained(AutoTokenizer, str(path), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot load a tokenizer ({exc}); fix: pass the folder of the generator "
            "model (with tokenizer.json)"
        ) from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"{path}: tokenizer is not a fast (Rust) tokenizer; fix: save it with tokenizer.json"
        )
    return tokenizer


def token_stream(
    docs: Sequence[Document], tokenizer: object, *, with_pii: bool = False, batch: int = 256
) -> TokenStream:
    """Hash the ids of a Hugging Face fast tokenizer (no special tokens) for every document."""
    hashes: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    hits: list[SpanHits] = []
    for begin in range(0, len(docs), batch):
        chunk = docs[begin : begin + batch]
        encoding = tokenizer(  # type: ignore[operator]
            [d.text for d in chunk],
            add_special_tokens=False,
            return_offsets_mapping=with_pii,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        ids = encoding["input_ids"]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(
            (t for row in ids for t in row), dtype=np.int64, count=int(lengths.sum())
        )
        hashes.append(mix64(flat.astype(U64) + _TOKEN_SALT))
        counts.append(lengths)
        if with_pii:
            hits.append(_token_hits(chunk, encoding["offset_mapping"]))
    return assemble(hashes, counts, hits if with_pii else None)


def unit_stream(
    docs: Sequence[Document], unit: Unit, tokenizer: object, *, with_pii: bool
) -> TokenStream:
    """The stream of ``unit``: words, or the tokens of ``tokenizer`` (unused for words)."""
    if unit == "words":
        return word_stream(docs, with_pii=with_pii)
    return token_stream(docs, tokenizer, with_pii=with_pii)


def _token_hits(docs: Sequence[Document], offsets: Sequence[Sequence[tuple[int, int]]]) -> SpanHits:
    """Which span each token of a batch overlaps, on the batch's joined character offsets."""
    tokens: list[np.ndarray] = [np.zeros((0, 2), dtype=np.int64)]
    spans: list[tuple[int, int]] = []
    base = 0
    for doc, doc_offsets in zip(docs, offsets, strict=True):
        tokens.append(np.asarray(doc_offsets, dtype=np.int64).reshape(-1, 2) + base)
        spans.extend((base + s.start, base + s.end) for s in doc.spans)
        base += len(doc.text) + 1
    joined = np.concatenate(tokens)
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    return span_hits(joined[:, 0], joined[:, 1], bounds[:, 0], bounds[:, 1])
