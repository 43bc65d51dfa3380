"""Exact nucleus (top-p) sampling without sorting the whole vocabulary.

transformers' ``TopPLogitsWarper`` sorts every row of logits (262k entries per token for
Gemma 3) at each step; on a CPU that sort costs several times the forward pass. The nucleus
of a row is the smallest set of most probable tokens whose probability mass reaches ``p``. Its
mass can be checked without a sort: the log-normaliser of the row (one pass) gives each of the
``k`` largest logits (``topk``, a partial selection) its exact probability; when those ``k``
probabilities already add up to ``p`` the nucleus lies inside them and is read off their
cumulative sum. For a wide row, the probability mass is summed per logit bucket (one more
pass), which locates the bucket where the nucleus ends, and only that bucket is sorted. The
kept set is the one the full sort keeps (up to exact ties with the boundary logit, which are
kept); masses are summed in float64 so that rounding does not move the boundary.

:class:`NucleusWarper` applies, in the order transformers does, temperature, then top-k (when
asked), then top-p, in one logits processor. :class:`NucleusSampler`, which the transformers
backend uses, also draws the token, so that ``generate`` decodes greedily and skips its own
full-vocabulary softmax and multinomial.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import LogitsProcessor

FIRST_K = 1024  # measured on Gemma 3 logits: median nucleus 297 tokens, p90 1,885
PARTIAL = 256
BUCKETS = 512
# Below the row's top logit minus this, tokens hold at most vocab * e**-SPAN of the mass
# (2.5e-8 for 262k tokens), so a nucleus with p < 1 - 1e-6 never ends there.
SPAN = 30.0
WIDE_P_LIMIT = 1.0 - 1e-6


def _keep_from_sorted(probs: torch.Tensor, top_p: float, min_keep: int) -> torch.Tensor:
    """How many of each row's descending ``probs`` the nucleus keeps: every token whose
    higher-ranked mass is still below ``top_p`` (transformers' rule), at least ``min_keep``."""
    above = probs.cumsum(dim=-1) - probs  # mass strictly above each token
    return (above < top_p).sum(dim=-1).clamp(min=min_keep)


def _log_normaliser(scores: torch.Tensor) -> torch.Tensor:
    """Each row's log-sum-exp in float64: one pass in the logits' dtype, summed in float64
    (masses near p are compared, so rounding must not move the boundary)."""
    top = scores.amax(dim=-1, keepdim=True)
    terms = (scores - top).exp()
    cut = terms.shape[-1] - terms.shape[-1] % PARTIAL
    # short float32 partial sums (accurate), added up in float64 (no drift over 262k terms)
    partial = terms[:, :cut].reshape(terms.shape[0], -1, PARTIAL).sum(dim=-1).double()
    rest = terms[:, cut:].sum(dim=-1, dtype=torch.float64)
    return top.double() + (partial.sum(dim=-1) + rest).unsqueeze(-1).log()


def _top_k_rows(
    scores: torch.Tensor, log_z: torch.Tensor, top_p: float, min_keep: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """For the rows whose ``FIRST_K`` largest tokens already hold ``top_p``: (which rows,
    their top-k token ids, the probabilities of those tokens with the ones outside the nucleus
    zeroed, the thresholds)."""
    k = min(FIRST_K, scores.shape[1])
    values, indices = torch.topk(scores, k, dim=-1, sorted=True)
    probs = (values.double() - log_z).exp()
    reached = (probs.sum(dim=-1) >= top_p) | (k == scores.shape[1])
    counts = _keep_from_sorted(probs[reached], top_p, min_keep).clamp(max=k)
    inside = torch.arange(k, device=scores.device).unsqueeze(0) < counts.unsqueeze(1)
    thresholds = values[reached].gather(1, (counts - 1).unsqueeze(1))
    return reached, indices[reached], probs[reached] * inside, thresholds


def _bucketed_row(row: torch.Tensor, log_z: torch.Tensor, top_p: float, min_keep: int) -> Any:
    """One wide row's threshold: probability mass summed per logit bucket (float64) finds the
    bucket where the nucleus ends; only that bucket's tokens are sorted."""
    top = row.max()
    width = SPAN / (BUCKETS - 1)
    bucket = ((top - row) / width).floor().clamp_(0, BUCKETS - 1).long()
    probs = (row.double() - log_z).exp()
    mass = torch.zeros(BUCKETS, dtype=torch.float64).scatter_add_(0, bucket, probs)
    cumulative = mass.cumsum(0)
    edge = int((cumulative < top_p).sum().clamp(max=BUCKETS - 1))
    inside = bucket == edge
    values = torch.sort(row[inside], descending=True).values
    above = float(cumulative[edge] - mass[edge])  # mass of the buckets above the edge
    local = (values.double() - log_z).exp()
    higher = above + local.cumsum(0) - local
    kept_before = int((bucket < edge).sum())
    count = max(int((higher < top_p).sum()), min_keep - kept_before, 1)
    return values[min(count, values.numel()) - 1]


def _wide_threshold(row: torch.Tensor, log_z: torch.Tensor, top_p: float, min_keep: int) -> Any:
    if top_p >= WIDE_P_LIMIT:
        ordered = torch.sort(row, descending=True).values.unsqueeze(0)
        probs = (ordered.double() - log_z).exp()
        return ordered[0, int(_keep_from_sorted(probs, top_p, min_keep)[0]) - 1]
    return _bucketed_row(row, log_z, top_p, min_keep)


def nucleus_threshold(scores: torch.Tensor, top_p: float, min_keep: int = 1) -> torch.Tensor:
    """Each row's lowest logit inside its nucleus, shape ``(rows, 1)``: the nucleus is every
    token at or above it (a token tied with it at the boundary is kept too)."""
    log_z = _log_normaliser(scores)
    threshold = torch.empty(scores.shape[0], 1, dtype=scores.dtype, device=scores.device)
    reached, _, _, found = _top_k_rows(scores, log_z, top_p, min_keep)
    threshold[reached] = found
    for row in (~reached).nonzero().flatten().tolist():
        threshold[row] = _wide_threshold(scores[row], log_z[row], top_p, min_keep)
    return threshold


def _draw_rows(
    probs: torch.Tensor, rows: list[int], generators: Sequence[torch.Generator] | None
) -> torch.Tensor:
    """One pick per row of ``probs``; row ``j`` with the generator of batch row ``rows[j]``
    (torch's global generator when none are given)."""
    if generators is None:
        return torch.multinomial(probs, 1)
    picks = [torch.multinomial(probs[j], 1, generator=generators[r]) for j, r in enumerate(rows)]
    return torch.stack(picks)


def sample_nucleus(
    scores: torch.Tensor,
    top_p: float,
    min_keep: int = 1,
    generators: Sequence[torch.Generator] | None = None,
) -> torch.Tensor:
    """One token id per row, drawn from the row's nucleus in proportion to its probability:
    row ``i`` with ``generators[i]`` when given (a note's draws then do not depend on the
    other rows), else with torch's global generator (``torch.manual_seed``)."""
    log_z = _log_normaliser(scores)
    chosen = torch.empty(scores.shape[0], dtype=torch.long, device=scores.device)
    reached, indices, probs, _ = _top_k_rows(scores, log_z, top_p, min_keep)
    if reached.any():
        picks = _draw_rows(probs, reached.nonzero().flatten().tolist(), generators)
        chosen[reached] = indices.gather(1, picks).squeeze(1)
    for row in (~reached).nonzero().flatten().tolist():
        threshold = _wide_threshold(scores[row], log_z[row], top_p, min_keep)
        candidates = (scores[row] >= threshold).nonzero().squeeze(1)
        weights = (scores[row, candidates].double() - log_z[row]).exp()
        chosen[row] = candidates[_draw_rows(weights.unsqueeze(0), [row], generators)[0]]
    return chosen


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

    def _temperature_and_top_k(self, scores: torch.Tensor) -> torch.Tensor:
        if self.temperature != 1.0:
            scores = scores / self.temperature
        if self.top_k > 0 and self.top_k < scores.shape[-1]:
            kth = torch.topk(scores, self.top_k, dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        return scores

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> Any:
        scores = self._temperature_and_top_k(scores)
        if self.top_p < 1.0:
            threshold = nucleus_threshold(scores, self.top_p)
            scores = scores.masked_fill(scores < threshold, float("-inf"))
        return scores


class RowNucleusSampler(NucleusWarper):
    """Temperature, optional top-k and exact top-p, then one draw per row with that row's own
    generator: the sampler of the refill loop (``site_agent.generate.refill``)."""

    def __call__(  # type: ignore[override]
        self, scores: torch.Tensor, generators: Sequence[torch.Generator]
    ) -> torch.Tensor:
        scores = self._temperature_and_top_k(scores)
        if self.top_p >= 1.0:
            probs = torch.softmax(scores.double(), dim=-1)
            return _draw_rows(probs, list(range(scores.shape[0])), generators).squeeze(1)
        return sample_nucleus(scores, self.top_p, generators=generators)


class NucleusSampler(NucleusWarper):
    """Draws the next token itself (exact nucleus, no full-vocabulary softmax or sampling) and
    hands ``generate`` a row whose only finite score is that token: used with greedy decoding,
    whose arg-max then returns the draw. The full-vocabulary softmax and multinomial of
    transformers' sampling cost more than the forward pass for a 262k vocabulary on a CPU."""

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> Any:
        tokens = sample_nucleus(self._temperature_and_top_k(scores), self.top_p)
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, tokens.unsqueeze(1), 0.0)


def generation_kwargs(top_p: float, temperature: float, top_k: int) -> dict[str, Any]:
    """``generate`` arguments that sample with :class:`NucleusSampler`: greedy decoding over
    the sampler's one-token rows, the library's own warpers off."""
    from transformers import LogitsProcessorList

    return {
        "do_sample": False,
        "top_p": None,
        "top_k": None,
        "temperature": None,
        "logits_processor": LogitsProcessorList([NucleusSampler(top_p, temperature, top_k)]),
    }
