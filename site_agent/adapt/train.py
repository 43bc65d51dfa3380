"""``adapt_generator``: LoRA/QLoRA domain adaptation of the generator on a site's notes.

The loop is deliberately plain: a fixed, seed-determined order of examples; an optimiser step
every ``gradient_accumulation`` batches; a checkpoint every ``checkpoint_every`` steps. A
killed run started again with the same inputs resumes from its last checkpoint and ends with
the same adapter it would have produced uninterrupted.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.errors import UsageError
from shared.optimiser import adamw
from shared.provenance import config_digest, sha256_bytes
from shared.threads import ThreadBudget
from site_agent.adapt.checkpoint import resume_latest, save_checkpoint
from site_agent.adapt.data import (
    collate,
    collate_packed,
    document_windows,
    epoch_order,
    pack_windows,
    phi_bearing,
    repeat_phi_windows,
)
from site_agent.adapt.model import attach_lora, load_base
from site_agent.adapt.output_vocabulary import (
    OutputVocabulary,
    causal_lm_loss,
    corpus_vocabulary,
    restrict_output_layer,
    restricted_labels,
)
from site_agent.adapt.quantization import (
    apply_cpu_threads,
    bitsandbytes_importable,
    choose_quantization,
    cpu_bf16_supported,
)
from site_agent.adapt.recipe import GeneratorRecipe
from site_agent.adapt.result import AdaptResult, TrainingRun, TrainingText, finish, read_result
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.vocabulary import TOKEN_ROWS, add_tokens, trainable_rows
from site_agent.models import resolve_model

Progress = Callable[[int, int], None]
"""Called after each optimiser step with (steps done, total steps)."""


def run_digest(
    train_texts: Sequence[str],
    base_model: str,
    settings: AdaptSettings,
    added_tokens: Sequence[str] = (),
    vocabulary_texts: Sequence[str] = (),
) -> str:
    """What identifies a run: settings, base model, the exact training text, added tokens,
    and (restricted vocabulary) the other texts whose tokens the output layer keeps."""
    data = sha256_bytes("\0".join(train_texts).encode())
    settings_json = settings.model_dump(mode="json")
    identity: dict[str, object] = {
        "settings": settings_json,
        "base_model": base_model,
        "data": data,
    }
    if added_tokens:
        identity["added_tokens"] = list(added_tokens)
    if settings.vocabulary == "corpus":
        identity["vocabulary_texts"] = sha256_bytes("\0".join(vocabulary_texts).encode())
    return config_digest(identity)


def _micro_batches(
    order: list[int], step_in_epoch: int, settings: AdaptSettings
) -> list[list[int]]:
    per_step = settings.batch_size * settings.gradient_accumulation
    chosen = order[step_in_epoch * per_step : (step_in_epoch + 1) * per_step]
    return [chosen[i : i + settings.batch_size] for i in range(0, len(chosen), settings.batch_size)]


def _train_step(
    model: Any,
    examples: list[Any],
    batches: list[list[int]],
    batch_of: Callable[[list[Any], int], dict[str, Any]],
    pad_id: int,
    chunked: bool,
    lookup: Any = None,
) -> float:
    from site_agent.adapt.loss import chunked_causal_lm_loss  # torch: only when training

    device = next(model.parameters()).device
    total = sum(len(b) for b in batches)
    loss_sum = 0.0
    for batch in batches:
        rows = [examples[i] for i in batch]
        inputs = {k: v.to(device) for k, v in batch_of(rows, pad_id).items()}
        if lookup is not None:  # targets are rows of the restricted output layer
            inputs["labels"] = restricted_labels(inputs["labels"], lookup.to(device))
        if chunked:
            full = chunked_causal_lm_loss(model, **inputs)
        elif lookup is not None:
            labels = inputs.pop("labels")
            full = causal_lm_loss(model(**inputs, use_cache=False).logits, labels)
        else:
            full = model(**inputs, use_cache=False).loss
        loss = full * (len(batch) / total)
        loss.backward()
        loss_sum += float(loss.detach())
    return loss_sum


def _optimiser(model: Any, settings: AdaptSettings, total_steps: int) -> tuple[Any, Any]:
    """AdamW over the adapter; the added tokens' embedding rows (PEFT trainable tokens) at
    ``token_learning_rate``: at the adapter's rate a new row barely moves from its random start
    in a short run (Gemma 3, 96 steps at 1e-4: row norm 0.506 -> 0.504; trained rows ~1.03)."""
    from transformers import get_scheduler

    groups = []
    for is_rows in (False, True):
        params = [
            p for name, p in model.named_parameters()
            if p.requires_grad and (TOKEN_ROWS in name) == is_rows
        ]  # fmt: skip
        if params:
            lr = settings.token_learning_rate if is_rows else settings.learning_rate
            groups.append({"params": params, "lr": lr})
    optimizer = adamw(groups, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    scheduler = get_scheduler(settings.lr_scheduler, optimizer, settings.warmup_steps, total_steps)
    return optimizer, scheduler


@dataclass
class _Loop:
    """What the training loop works on."""

    model: Any
    optimizer: Any
    scheduler: Any
    examples: list[Any]  # token windows, or (packing) rows of whole windows
    batch_of: Callable[[list[Any], int], dict[str, Any]]  # collate or collate_packed
    pad_id: int
    checkpoints: Path
    digest: str
    budget: ThreadBudget | None = None  # re-read before every step (None: threads pinned)
    vocabulary: OutputVocabulary | None = None  # the restricted output layer's ids


def _train_loop(
    loop: _Loop,
    settings: AdaptSettings,
    start: int,
    total: int,
    steps_per_epoch: int,
    losses: list[float],
    progress: Progress | None,
) -> None:
    """Optimiser steps ``start..total``; checkpoint every ``checkpoint_every`` steps."""
    import torch

    trainable = [p for p in loop.model.parameters() if p.requires_grad]
    chunked = settings.loss == "chunked"
    lookup = loop.vocabulary.lookup() if loop.vocabulary is not None else None
    loop.model.train()
    for step in range(start, total):
        if loop.budget is not None:
            torch.set_num_threads(loop.budget.threads())
        epoch, within = divmod(step, steps_per_epoch)
        order = epoch_order(len(loop.examples), settings.seed, epoch)
        losses.append(
            _train_step(
                loop.model,
                loop.examples,
                _micro_batches(order, within, settings),
                loop.batch_of,
                loop.pad_id,
                chunked,
                lookup,
            )
        )
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        loop.optimizer.step()
        loop.scheduler.step()
        loop.optimizer.zero_grad(set_to_none=True)
        if (step + 1) % settings.checkpoint_every == 0 and step + 1 < total:
            save_checkpoint(
                loop.checkpoints,
                step + 1,
                loop.model,
                loop.optimizer,
                loop.scheduler,
                losses,
                loop.digest,
                settings.keep_checkpoints,
            )
        if progress is not None:
            progress(step + 1, total)


def adapt_generator(
    train_texts: Sequence[str],
    base_model: str | os.PathLike[str],
    settings: AdaptSettings,
    out_dir: str | os.PathLike[str],
    progress: Progress | None = None,
    added_tokens: Sequence[str] = (),
    vocabulary_texts: Sequence[str] = (),
    phi_documents: Sequence[bool] = (),
    recipe: GeneratorRecipe | None = None,
) -> AdaptResult:
    """Fine-tune LoRA adapters for ``base_model`` on ``train_texts``; save them in ``out_dir``.

    Writes ``out_dir/adapter`` (``PeftModel.from_pretrained``-loadable; with its tokenizer
    when ``added_tokens`` grew the vocabulary; with ``vocabulary.json`` under ``[adapt]
    vocabulary = "corpus"``, whose set is the tokens of ``train_texts`` and
    ``vocabulary_texts``) and ``out_dir/adapt.json`` (with ``recipe``, the reasons for the
    settings); intermediate state lives in ``out_dir/checkpoints``. ``phi_documents`` flags
    the texts with PHI, for ``phi_window_repeat`` when the mode adds no marker tokens.
    """
    import torch

    out = Path(out_dir)
    base_ref = str(base_model)
    digest = run_digest(train_texts, base_ref, settings, added_tokens, vocabulary_texts)
    done = read_result(out, digest)
    if done is not None:
        return done
    started = time.perf_counter()
    plan = choose_quantization(
        torch.cuda.is_available(),
        settings.quantization,
        bitsandbytes_importable(),
        cpu_bf16_supported(),
    )
    apply_cpu_threads(settings.cpu_threads, plan.device)
    # Unpinned on CPU: the cores other processes leave idle, re-read before every step, rather
    # than whatever thread count the process's previous stage left behind.
    unpinned = settings.cpu_threads is None and plan.device == "cpu"
    budget = ThreadBudget() if unpinned else None
    tokenizer, model = load_base(resolve_model(base_ref), plan)
    torch.manual_seed(settings.seed)
    marker_ids = add_tokens(tokenizer, model, added_tokens) if added_tokens else []
    vocabulary = None
    if settings.vocabulary == "corpus":
        vocabulary = corpus_vocabulary(tokenizer, [*train_texts, *vocabulary_texts])
        restrict_output_layer(model, vocabulary)
    rows = trainable_rows(model, marker_ids, vocabulary) if marker_ids else None
    windows, sources = document_windows(train_texts, tokenizer, settings.max_length)
    if not windows:
        raise UsageError("no training text: every document is empty; fix: check the corpus")
    model = attach_lora(model, settings, plan, rows)
    repeat = settings.phi_window_repeat or 1
    holds_phi = phi_bearing(windows, sources, phi_documents, marker_ids)
    seen = repeat_phi_windows(windows, holds_phi, repeat) if repeat > 1 else windows
    examples: list[Any] = (
        list(pack_windows(seen, settings.max_length)) if settings.packing else list(seen)
    )
    batch_of = collate_packed if settings.packing else collate
    per_step = settings.batch_size * settings.gradient_accumulation
    steps_per_epoch = math.ceil(len(examples) / per_step)
    total = settings.epochs * steps_per_epoch
    if settings.max_steps is not None:
        total = min(total, settings.max_steps)
    optimizer, scheduler = _optimiser(model, settings, total)
    checkpoints = out / "checkpoints"
    resumed = resume_latest(checkpoints, model, optimizer, scheduler, digest)
    start = resumed.step if resumed else 0
    losses = resumed.losses if resumed else []
    loop_started = time.perf_counter()
    _train_loop(
        _Loop(
            model,
            optimizer,
            scheduler,
            examples,
            batch_of,
            tokenizer.pad_token_id,
            checkpoints,
            digest,
            budget,
            vocabulary,
        ),
        settings,
        start,
        total,
        steps_per_epoch,
        losses,
        progress,
    )
    train_seconds = time.perf_counter() - loop_started
    text = TrainingText(
        documents=len(train_texts),
        windows=len(windows),
        phi_windows=sum(holds_phi),
        seen_windows=len(seen),
        rows=len(examples),
        tokens=sum(len(w) for w in seen),
    )
    run = TrainingRun(
        losses=losses,
        steps=total,
        steps_per_epoch=steps_per_epoch,
        resumed_from=start if resumed else None,
        seconds=time.perf_counter() - started,
        train_seconds=train_seconds,
    )
    tokens = tokenizer if added_tokens else None
    return finish(
        out, model, settings, plan, base_ref, digest, text, run, tokens, recipe, vocabulary
    )
