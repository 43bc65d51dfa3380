"""The torch loops: one training epoch, and batched prediction over encoded chunks.

A plain loop rather than HF ``Trainer``: on two CPU cores the Trainer's per-step bookkeeping,
dataloader workers and callbacks cost more than they give, and the loop needs only dynamic
padding, length-grouped batches and gradient accumulation.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from ner.decoding import DECODERS
from ner.features import EncodedChunk, collate, length_grouped_batches
from shared.cpu_features import bf16_autocast, cpu_bf16_supported
from shared.ner_tokens import IGNORE

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as work advances (e.g. ``"epoch 2/6"``, 40, 120)."""


def resolve_bf16(flag: bool | None, device: torch.device) -> bool:
    """Whether to autocast to bfloat16 on ``device`` (the rule: ``shared.cpu_features.
    bf16_autocast``), with torch's probes. On an AMD EPYC with AVX-512 BF16 and no AMX,
    e5-small trained 1.7-2.4x and predicted 2.3x as fast as in float32 (docs/results.md, "The
    machine annotator")."""
    cuda = device.type == "cuda"
    return bf16_autocast(
        flag,
        cuda=cuda,
        cuda_bf16=cuda and bool(torch.cuda.is_bf16_supported()),
        cpu_bf16=cpu_bf16_supported(),
    )


TRAINING_ATTENTION = "eager"
"""The attention a CPU trains with under bf16 autocast: torch's fused CPU attention has a slow
bfloat16 backward (e5-small, 4 x 220 tokens: 0.38 s a step against 0.31 with the plain
matrix products); for prediction the fused one stays (0.92 s against 1.42 per 32 chunks)."""


@contextlib.contextmanager
def training_attention(model: Any, device: torch.device, bf16: bool) -> Iterator[None]:
    """Train with :data:`TRAINING_ATTENTION` where bf16 autocast runs on a CPU; put the
    model's own attention back afterwards (prediction and saving see it)."""
    own = getattr(model.config, "_attn_implementation", None)
    switch = bf16 and device.type == "cpu" and own not in (None, TRAINING_ATTENTION)
    if switch:
        model.set_attn_implementation(TRAINING_ATTENTION)
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(own)


def autocast(device: torch.device, bf16: bool) -> contextlib.AbstractContextManager[Any]:
    """bfloat16 autocast when asked for, else a no-op."""
    if not bf16:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def train_epoch(
    model: Any,
    chunks: Sequence[EncodedChunk],
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    *,
    micro_batch: int,
    accumulation: int,
    pad_id: int,
    rng: random.Random,
    group_by_length: bool,
    bf16: bool,
    stage: str = "train",
    progress: Progress | None = None,
    tag_weights: torch.Tensor | None = None,
    max_batches: int | None = None,
) -> float:
    """One pass over ``chunks`` (its first ``max_batches`` micro-batches when given); returns
    the mean training loss per micro-batch.

    ``tag_weights`` (one per tag id) weighs the cross-entropy of each gold tag; None is the
    model's own unweighted loss.
    """
    device = next(model.parameters()).device
    model.train()
    batches = length_grouped_batches([len(c) for c in chunks], micro_batch, rng, group_by_length)
    if max_batches is not None:
        batches = batches[:max_batches]
    total, losses = len(batches), []
    with training_attention(model, device, bf16):
        for index, batch in enumerate(batches, start=1):
            pieces = collate([chunks[i] for i in batch], pad_id)
            inputs = {k: v.to(device) for k, v in pieces.items()}
            with autocast(device, bf16):
                loss = _loss(model, inputs, tag_weights)
            (loss / accumulation).backward()
            losses.append(float(loss.detach()))
            if index % accumulation == 0 or index == total:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if progress is not None:
                progress(stage, index, total)
    return sum(losses) / max(1, len(losses))


def _loss(model: Any, inputs: dict[str, torch.Tensor], weights: torch.Tensor | None) -> Any:
    if weights is None:
        return model(**inputs).loss
    labels = inputs.pop("labels")
    logits = model(**inputs).logits.float()
    return torch.nn.functional.cross_entropy(
        logits.view(-1, logits.shape[-1]),
        labels.view(-1),
        weight=weights.to(logits.device),
        ignore_index=IGNORE,
    )


def _by_length(chunks: Sequence[EncodedChunk], size: int) -> Iterator[list[int]]:
    order = sorted(range(len(chunks)), key=lambda i: len(chunks[i]))
    for begin in range(0, len(order), size):
        yield order[begin : begin + size]


@torch.inference_mode()
def predict(
    model: Any,
    chunks: Sequence[EncodedChunk],
    *,
    batch_size: int,
    pad_id: int,
    bf16: bool = False,
    decoder: str = "argmax",
    tags: Sequence[str] = (),
    stage: str = "predict",
    progress: Progress | None = None,
) -> list[list[int]]:
    """Predicted label id for every token of every chunk (batches sorted by length).

    Every token gets its arg-max label; the tokens that decoding reads (each word's first
    token) then get the tags of ``decoder`` (``ner.decoding``), which sees the
    log probabilities of those tokens; ``tags`` names the label ids (needed by ``viterbi``).
    """
    decode = DECODERS[decoder]
    device = next(model.parameters()).device
    model.eval()
    out: list[list[int]] = [[] for _ in chunks]
    batches = list(_by_length(chunks, batch_size))
    for done, batch in enumerate(batches, start=1):
        inputs = collate([chunks[i] for i in batch], pad_id)
        inputs.pop("labels", None)
        with autocast(device, bf16):
            logits = model(**{k: v.to(device) for k, v in inputs.items()}).logits
        best = logits.argmax(dim=-1).cpu().tolist()
        log_probs = torch.log_softmax(logits.float(), dim=-1).cpu().numpy()
        for row, i in enumerate(batch):
            out[i] = best[row][: len(chunks[i])]
            starts = chunks[i].word_starts()
            for position, tag in zip(starts, decode(log_probs[row, starts], tags), strict=True):
                out[i][position] = tag
        if progress is not None:
            progress(stage, done, len(batches))
    return out
