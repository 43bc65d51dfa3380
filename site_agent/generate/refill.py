"""Continuous batching over the model's own KV cache: a finished note's row is refilled at once.

``generate`` on a static batch runs until the batch's longest note ends and keeps computing
the rows that have finished. Here every row carries one note: when a note ends (end of
sequence, or its token budget), its row leaves the batch and the next prompt is prefilled and
joins it, so each step computes only notes still being written.

The batch shares one column axis. Every row's tokens are right-aligned and contiguous up to
the newest column; a row that joined later has masked columns on its left. Joining rows are
prefilled together, then their cache is padded on the left to the batch's width (or the
batch to theirs) and concatenated on the batch axis; columns no row uses any more are cut
off. Sliding-window layers (Gemma 3) keep only the newest ``window - 1`` columns, so the
same cut applies to them from the right, and their running length is set to the width.
Positions come from each row's own mask, so a note sees the same positions it would alone.

Each note is sampled with its own ``torch.Generator`` seeded from the note, so a note's text
does not depend on which notes share its batch or whether the run was resumed: note *i* is
the same note (up to the kernels' rounding, which batch shape can change in the last bits).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

RowSampler = Callable[[torch.Tensor, Sequence[torch.Generator]], torch.Tensor]
"""Draws one token per row of scores ``(rows, vocabulary)``, row ``i`` with generator ``i``."""


@dataclass(frozen=True)
class NoteRequest:
    """One note to write: its caller's key, its prompt's token ids, its sampler seed, and
    optionally its own token budget (else the run's ``max_new_tokens``)."""

    key: int
    prompt_ids: Sequence[int]
    seed: int
    max_new_tokens: int | None = None


@dataclass
class _Row:
    key: int
    generator: torch.Generator
    budget: int
    tokens: list[int] = field(default_factory=list)


def supports_refill(cache: Any) -> bool:
    """Whether every layer of ``cache`` is one this loop can splice (full or sliding-window
    dynamic layers); recurrent or quantised layers are not."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    return all(type(layer) in (DynamicLayer, DynamicSlidingWindowLayer) for layer in cache.layers)


def _pad_left(tensor: torch.Tensor, columns: int, dim: int) -> torch.Tensor:
    if columns <= 0:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = columns
    return torch.cat([tensor.new_zeros(shape), tensor], dim=dim)


def _kept(layer: Any, width: int) -> int:
    """How many of ``width`` columns a layer holds (a sliding window keeps ``window - 1``)."""
    if getattr(layer, "is_sliding", False):
        return min(width, layer.sliding_window - 1)
    return width


class RefillBatch:
    """The rows in flight: their notes, one shared cache, the mask of their columns."""

    def __init__(self, model: Any, eos: Iterable[int], sample: RowSampler) -> None:
        self.model = model
        self.eos = frozenset(eos)
        self.sample = sample
        self.device = model.device
        self.rows: list[_Row] = []
        self.cache: Any = None
        self.mask = torch.zeros(0, 0, dtype=torch.long, device=self.device)
        self.last = torch.zeros(0, dtype=torch.long, device=self.device)

    @property
    def width(self) -> int:
        return int(self.mask.shape[1])

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, cache: Any) -> torch.Tensor:
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -ids.shape[1] :]
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            cache=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        return out.logits[:, -1, :]

    def _new_cache(self) -> Any:
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)

    def admit(
        self, requests: Sequence[NoteRequest], pad_id: int, max_new_tokens: int = 1 << 30
    ) -> tuple[list[_Row], torch.Tensor]:
        """Prefill ``requests`` together and join them to the batch; returns the new rows and
        the scores of their first token."""
        length = max(len(r.prompt_ids) for r in requests)
        ids = torch.full((len(requests), length), pad_id, dtype=torch.long)
        mask = torch.zeros((len(requests), length), dtype=torch.long)
        for i, request in enumerate(requests):
            ids[i, length - len(request.prompt_ids) :] = torch.tensor(list(request.prompt_ids))
            mask[i, length - len(request.prompt_ids) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        cache = self._new_cache()
        scores = self._forward(ids, mask, cache)
        if not supports_refill(cache):
            raise TypeError(f"{type(self.model).__name__}: cache layers cannot be spliced")
        new_rows = []
        for request in requests:
            generator = torch.Generator(device=self.device)
            generator.manual_seed(request.seed)
            budget = request.max_new_tokens or max_new_tokens
            new_rows.append(_Row(request.key, generator, min(budget, max_new_tokens)))
        self._join(cache, mask)
        self.rows.extend(new_rows)
        return new_rows, scores

    def _join(self, cache: Any, mask: torch.Tensor) -> None:
        if self.cache is None or not self.rows:
            self.cache, self.mask = cache, mask
            self._set_width(mask.shape[1])
            return
        width = max(self.width, mask.shape[1])
        for mine, theirs in zip(self.cache.layers, cache.layers, strict=True):
            keep = _kept(mine, width)
            for name in ("keys", "values"):
                a, b = getattr(mine, name), getattr(theirs, name)
                a = _pad_left(a, keep - a.shape[2], dim=2)
                b = _pad_left(b, keep - b.shape[2], dim=2)
                setattr(mine, name, torch.cat([a, b], dim=0))
        self.mask = torch.cat(
            [
                _pad_left(self.mask, width - self.width, dim=1),
                _pad_left(mask, width - mask.shape[1], dim=1),
            ]
        )
        self._set_width(width)

    def _set_width(self, width: int) -> None:
        for layer in self.cache.layers:
            if hasattr(layer, "cumulative_length"):
                layer.cumulative_length = width

    def drop(self, finished: Sequence[int]) -> None:
        """Remove the rows at ``finished`` and the columns no remaining row uses."""
        if not finished:
            return
        gone = set(finished)
        keep_rows = [i for i in range(len(self.rows)) if i not in gone]
        self.rows = [self.rows[i] for i in keep_rows]
        if not self.rows:
            self.cache, self.last = None, self.last[:0]
            self.mask = self.mask[:0, :0]
            return
        index = torch.tensor(keep_rows, device=self.device)
        self.mask = self.mask.index_select(0, index)
        self.last = self.last.index_select(0, index)
        used = self.mask.sum(dim=0).nonzero()
        cut = int(used[0]) if used.numel() else self.width
        width = self.width - cut
        for layer in self.cache.layers:
            keep = _kept(layer, width)
            for name in ("keys", "values"):
                tensor = getattr(layer, name).index_select(0, index)
                setattr(layer, name, tensor[:, :, tensor.shape[2] - keep :])
        self.mask = self.mask[:, cut:]
        self._set_width(width)

    def step(self) -> torch.Tensor:
        """Feed every row its last token; the scores of the next one."""
        ones = torch.ones((len(self.rows), 1), dtype=torch.long, device=self.device)
        self.mask = torch.cat([self.mask, ones], dim=1)
        return self._forward(self.last.unsqueeze(1), self.mask, self.cache)


def refill_generate(
    model: Any,
    requests: Iterable[NoteRequest],
    *,
    rows: int,
    max_new_tokens: int,
    min_new_tokens: int,
    eos: Iterable[int],
    pad_id: int,
    sample: RowSampler,
) -> Iterator[tuple[int, list[int]]]:
    """Write every requested note with at most ``rows`` in flight; yields ``(key, token ids)``
    as each note ends (end-of-sequence excluded), in the order they end."""
    batch = RefillBatch(model, eos, sample)
    pending = iter(requests)
    exhausted = False
    eos_ids = torch.tensor(sorted(batch.eos), dtype=torch.long, device=batch.device)
    with torch.inference_mode():
        while True:
            joining: list[NoteRequest] = []
            while not exhausted and len(batch.rows) + len(joining) < rows:
                nxt = next(pending, None)
                if nxt is None:
                    exhausted = True
                else:
                    joining.append(nxt)
            if joining:
                new_rows, scores = batch.admit(joining, pad_id, max_new_tokens)
                first = _draw(scores, new_rows, batch.sample, eos_ids, min_new_tokens)
                batch.last = torch.cat([batch.last, first])
                yield from _finish(batch, len(batch.rows) - len(new_rows), first)
            if not batch.rows:
                if exhausted:
                    return
                continue  # every joining note ended at once: take the next ones
            scores = batch.step()
            tokens = _draw(scores, batch.rows, batch.sample, eos_ids, min_new_tokens)
            batch.last = tokens
            yield from _finish(batch, 0, tokens)


def _draw(
    scores: torch.Tensor,
    rows: Sequence[_Row],
    sample: RowSampler,
    eos_ids: torch.Tensor,
    min_new_tokens: int,
) -> torch.Tensor:
    early = [i for i, row in enumerate(rows) if len(row.tokens) < min_new_tokens]
    if early and eos_ids.numel():
        scores = scores.clone()
        scores[torch.tensor(early).unsqueeze(1), eos_ids.unsqueeze(0)] = float("-inf")
    return sample(scores, [row.generator for row in rows])


def _finish(
    batch: RefillBatch, offset: int, tokens: torch.Tensor
) -> Iterator[tuple[int, list[int]]]:
    """Record the tokens drawn for rows ``offset..``; yield and drop the rows that ended."""
    ended = []
    for i, token in enumerate(tokens.tolist()):
        row = batch.rows[offset + i]
        if token in batch.eos:
            ended.append(offset + i)
            continue
        row.tokens.append(token)
        if len(row.tokens) >= row.budget:
            ended.append(offset + i)
    for i in ended:
        yield batch.rows[i].key, batch.rows[i].tokens
    batch.drop(ended)
