"""Exact nucleus (top-p) sampling without sorting the whole vocabulary.

transformers' ``TopPLogitsWarper`` sorts every row of logits (262k entries per token for
Gemma 3) at each step; on a CPU that sort costs several times the forward pass. The nucleus
of a row is the smallest set of most probable tokens whose probability mass reaches ``p``. Its
mass can be checked without a sort: the log-normaliser of the row (one pass, ``logsumexp``)
gives each of the ``k`` largest logits (``topk``, a partial selection) its exact probability;
when those ``k`` probabilities already add up to ``p`` the nucleus lies inside them and is
read off their cumulative sum. Rows where they do not are retried with a larger ``k`` and
finally with the full sort, so the kept set is always the one the full sort would keep (up to
exact ties with the boundary logit, which are kept).

:class:`NucleusWarper` applies, in the order transformers does, temperature, then top-k (when
asked), then top-p, in one logits processor; the backend passes it to ``generate`` with the
library's own temperature/top-k/top-p switched off.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessor

FIRST_K = 64
GROWTH = 16


def _keep_from_sorted(probs: torch.Tensor, top_p: float, min_keep: int) -> torch.Tensor:
    """How many of each row's descending ``probs`` the nucleus keeps: every token whose
    higher-ranked mass is still below ``top_p`` (transformers' rule), at least ``min_keep``."""
    above = probs.cumsum(dim=-1) - probs  # mass strictly above each token
    return (above < top_p).sum(dim=-1).clamp(min=min_keep)


def nucleus_threshold(scores: torch.Tensor, top_p: float, min_keep: int = 1) -> torch.Tensor:
    """Each row's lowest logit inside its nucleus, shape ``(rows, 1)``: the nucleus is every
    token at or above it (a token tied with it at the boundary is kept too)."""
    rows, vocab = scores.shape
    top = scores.amax(dim=-1, keepdim=True)
    # one pass in the logits' dtype, summed in float64: masses near p are compared below
    log_z = top.double() + (scores - top).exp().sum(dim=-1, keepdim=True, dtype=torch.float64).log()
    threshold = torch.empty(rows, 1, dtype=scores.dtype, device=scores.device)
    pending = torch.arange(rows, device=scores.device)
    k = min(FIRST_K, vocab)
    while pending.numel():
        if k >= vocab:
            values = torch.sort(scores[pending], dim=-1, descending=True).values
        else:
            values = torch.topk(scores[pending], k, dim=-1, sorted=True).values
        probs = (values.double() - log_z[pending]).exp()
        reached = (probs.sum(dim=-1) >= top_p) | (k >= vocab)
        if reached.any():
            counts = _keep_from_sorted(probs[reached], top_p, min_keep).clamp(max=values.shape[1])
            threshold[pending[reached]] = values[reached].gather(1, (counts - 1).unsqueeze(1))
        pending = pending[~reached]
        k = min(k * GROWTH, vocab)
    return threshold


def nucleus_mask(scores: torch.Tensor, top_p: float, min_keep: int = 1) -> torch.Tensor:
    """Boolean mask of the tokens in each row's nucleus (True = kept)."""
    return scores >= nucleus_threshold(scores, top_p, min_keep)


class NucleusWarper(LogitsProcessor):
    """Temperature, optional top-k, then exact top-p, in transformers' order and semantics."""

    def __init__(self, top_p: float, temperature: float = 1.0, top_k: int = 0) -> None:
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        if temperature <= 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.top_p = top_p
        self.temperature = temperature
        self.top_k = top_k

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> Any:
        if self.temperature != 1.0:
            scores = scores / self.temperature
        if self.top_k > 0 and self.top_k < scores.shape[-1]:
            kth = torch.topk(scores, self.top_k, dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if self.top_p < 1.0:
            threshold = nucleus_threshold(scores, self.top_p)
            scores = scores.masked_fill(scores < threshold, float("-inf"))
        return scores


def generation_kwargs(top_p: float, temperature: float, top_k: int) -> dict[str, Any]:
    """``generate`` arguments that sample with :class:`NucleusWarper` instead of the library's
    own warpers (switched off so that nothing is applied twice)."""
    from transformers import LogitsProcessorList

    return {
        "do_sample": True,
        "top_p": 1.0,
        "top_k": 0,
        "temperature": 1.0,
        "logits_processor": LogitsProcessorList([NucleusWarper(top_p, temperature, top_k)]),
    }
