"""Sentence embeddings from the converted checkpoint, pooled the way multilingual-e5 is used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "


@torch.inference_mode()
def _embed_batch(model: Any, tokenizer: Any, batch: list[str]) -> np.ndarray:
    enc = tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
    hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[0]
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
    return torch.nn.functional.normalize(pooled, dim=-1).float().numpy()


def embed_sentences(
    model: Any, tokenizer: Any, texts: Sequence[str], is_query: bool = False, batch_size: int = 32
) -> np.ndarray:
    """Prefix, encode, mean-pool over the attention mask and L2-normalise each text.

    Texts are batched in length order (less padding) and returned in input order.
    """
    prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
    prefixed = [prefix + t for t in texts]
    order = sorted(range(len(prefixed)), key=lambda i: len(prefixed[i]))
    out = np.zeros((len(prefixed), model.config.hidden_size), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        out[chosen] = _embed_batch(model, tokenizer, [prefixed[i] for i in chosen])
    return out
