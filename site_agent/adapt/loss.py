"""The causal-LM loss without full-width logits.

``model(**batch).loss`` materialises a ``batch x length x vocabulary`` logits tensor (for
Gemma 3's 262k-token vocabulary, 4 x 256 windows: a gigabyte in float32, and as much again
for its gradient) before the cross-entropy reduces it. Here the decoder body runs once, the
output layer is applied to chunks of the positions that carry a label only, and each chunk's
logits are recomputed in the backward pass (activation checkpointing) instead of being kept:
at most one chunk of logits exists at a time. The value and the gradients are those of the
full computation (tested against it).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CHUNK_TOKENS = 1024


def _chunk_loss(hidden: torch.Tensor, targets: torch.Tensor, head: Any, softcap: Any) -> Any:
    logits = head(hidden).float()
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    return F.cross_entropy(logits, targets, reduction="sum")


def chunked_causal_lm_loss(
    model: Any,
    input_ids: torch.Tensor,
    labels: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    position_ids: torch.Tensor | None = None,
    chunk_tokens: int = CHUNK_TOKENS,
) -> Any:
    """Mean next-token cross-entropy over labelled positions (``-100`` ignored), as
    transformers computes it, with the output layer applied chunk by chunk. Packed rows come
    with ``position_ids`` and no ``attention_mask``."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    body = base.base_model
    hidden = body(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids,
        use_cache=False,
    ).last_hidden_state
    targets = labels[:, 1:].reshape(-1)
    hidden = hidden[:, :-1].reshape(-1, hidden.shape[-1])
    keep = targets != -100
    hidden, targets = hidden[keep], targets[keep]
    head = base.get_output_embeddings()
    softcap = getattr(base.config, "final_logit_softcapping", None)
    total = hidden.new_zeros((), dtype=torch.float32)
    for start in range(0, targets.numel(), chunk_tokens):
        end = start + chunk_tokens
        total = total + checkpoint(
            _chunk_loss, hidden[start:end], targets[start:end], head, softcap, use_reentrant=False
        )
    return total / max(targets.numel(), 1)
