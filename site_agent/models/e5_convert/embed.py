"""Sentence embeddings from the converted checkpoint, pooled the way multilingual-e5 is used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "


@torch.inference_mode()
def embed_sentences(
    model: Any, tokenizer: Any, texts: Sequence[str], is_query: bool = False, batch_size: int = 32
) -> np.ndarray:
    """Prefix, encode, mean-pool over the attention mask and L2-normalise each text."""
    prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
    rows: list[np.ndarray] = []
    for start in range(0, len(texts), batch_size):
        batch = [prefix + t for t in texts[start : start + batch_size]]
        enc = tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
        hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[0]
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        rows.append(torch.nn.functional.normalize(pooled, dim=-1).float().numpy())
    if not rows:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.concatenate(rows)
