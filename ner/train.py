"""Fine-tune an encoder as the site's machine annotator (seed 000 §3.3-3.4, Table 9).

Chunks of 128 words, IOB2 tags on first sub-tokens, AdamW with linear decay, evaluation on the
validation corpus after each epoch and the best epoch kept. The result is a folder that both
``machine_annotate`` and ``transformers.pipeline("token-classification", model=...)`` load,
with ``annotator.json`` recording how it was made.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ner.backbone import check_backbone, load_fast_tokenizer
from ner.features import EncodedChunk, encode_corpus
from ner.loop import Progress, resolve_bf16, train_epoch
from ner.recipe import corpus_recipe
from ner.resume import EpochCheckpoint, EpochState
from ner.sampling import EpochSampler, tag_weights
from ner.validate import ValidationSet, validation_metrics
from protocol import Corpus
from protocol.annotator import (
    AnnotatorRecord,
    AnnotatorResult,
    AnnotatorSettings,
    EpochRecord,
    TrainingRecipe,
)
from shared.atomic import atomic_directory, atomic_write_text
from shared.errors import UsageError
from shared.model_identity import loadable_identity
from shared.ner_tokens import iob2_labels
from shared.optimiser import adamw
from shared.provenance import config_digest, make_provenance
from shared.threads import ThreadBudget

RECORD_FILE = "annotator.json"
HEAD_PREFIX = "classifier."
"""Parameters of the new token-classification head (``*ForTokenClassification.classifier``)."""
HEAD_LR_SCALE = 10.0


def configure_torch(settings: AnnotatorSettings) -> torch.device:
    """Seed everything and pick CUDA when present."""
    torch.manual_seed(settings.seed)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def thread_budget(settings: AnnotatorSettings) -> ThreadBudget | None:
    """Pin torch's CPU threads when the settings give ``num_threads`` (None back); else a budget
    that follows the cores other processes leave idle (see :func:`use_threads`)."""
    if settings.num_threads:
        torch.set_num_threads(settings.num_threads)
        return None
    return ThreadBudget()


def use_threads(budget: ThreadBudget | None) -> int:
    """Set torch's CPU threads to what ``budget`` offers now (None: leave them); return them."""
    if budget is not None:
        torch.set_num_threads(budget.threads())
    return torch.get_num_threads()


def _load_model(backbone: Path | str, tags: list[str]) -> tuple[Any, bool]:
    """The token classifier and whether its head is new (not in the checkpoint, or resized)."""
    from transformers import AutoModelForTokenClassification

    from shared.safe_models import from_pretrained

    model, info = from_pretrained(
        AutoModelForTokenClassification,
        backbone,
        num_labels=len(tags),
        id2label=dict(enumerate(tags)),
        label2id={t: i for i, t in enumerate(tags)},
        ignore_mismatched_sizes=True,
        output_loading_info=True,
    )
    mismatched = [k if isinstance(k, str) else k[0] for k in info.get("mismatched_keys", ())]
    fresh = [*info.get("missing_keys", ()), *mismatched]
    return model, any(str(key).startswith(HEAD_PREFIX) for key in fresh)


def fix_input_embeddings(model: Any, settings: AnnotatorSettings) -> Any:
    """Fix the input embedding matrix when the settings ask for it (see AnnotatorSettings)."""
    weight = model.get_input_embeddings().weight
    freeze = settings.freeze_embeddings
    if freeze is None:
        freeze = 2 * weight.numel() >= sum(p.numel() for p in model.parameters())
    weight.requires_grad_(not freeze)
    return model


def _optimiser(
    model: Any, settings: AnnotatorSettings, steps: int, new_head: bool = False
) -> tuple[Any, Any]:
    """AdamW (no decay on biases and norms; a new head at its own rate) with linear warm-up
    then linear decay to zero."""
    head_lr = settings.learning_rate
    if new_head:
        head_lr = settings.head_learning_rate or HEAD_LR_SCALE * settings.learning_rate
    groups = []
    for is_head in (False, True):
        params = [
            p for name, p in model.named_parameters()
            if p.requires_grad and name.startswith(HEAD_PREFIX) == is_head
        ]  # fmt: skip
        lr = head_lr if is_head else settings.learning_rate
        groups += [
            {"params": [p for p in params if p.ndim > 1], "weight_decay": settings.weight_decay,
             "lr": lr},
            {"params": [p for p in params if p.ndim <= 1], "weight_decay": 0.0, "lr": lr},
        ]  # fmt: skip
    optimizer = adamw(groups, lr=settings.learning_rate)
    warmup = int(steps * settings.warmup_ratio)

    def scale(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, scale)


def _encode(corpus: Corpus, tokenizer: Any, settings: AnnotatorSettings, tags: list[str]) -> Any:
    label2id = {t: i for i, t in enumerate(tags)}
    chunks = encode_corpus(corpus, tokenizer, settings.chunk_words, settings.max_length, label2id)
    return [c for c in chunks if c.has_words]


def train_annotator(
    train: Corpus,
    validation: Corpus | None,
    base_model: str | Path,
    settings: AnnotatorSettings | None = None,
    out_dir: Path | None = None,
    progress: Progress | None = None,
    checkpoint_dir: Path | None = None,
) -> AnnotatorResult:
    """Fine-tune ``base_model`` on ``train``; keep the epoch that scores best on ``validation``.

    ``base_model`` is a model folder or a Hugging Face id (a registry name is resolved by the
    caller first). The recipe (sampling of PHI-free chunks, entity loss weight, epochs) follows
    the training corpus's PHI statistics (``ner.recipe``). Without a validation corpus the last
    epoch is kept. Writes ``out_dir`` atomically. With ``checkpoint_dir`` the state after
    each epoch is saved there and a stopped run resumes from it (``ner.resume``); the folder
    is removed once the model is saved.
    """
    settings = settings or AnnotatorSettings()
    if out_dir is None:
        raise UsageError("train_annotator needs out_dir; fix: pass the folder to save the model")
    started = time.perf_counter()
    budget = thread_budget(settings)  # its first reading covers loading and encoding
    device = configure_torch(settings)
    backbone = check_backbone(base_model)
    tokenizer = load_fast_tokenizer(backbone)
    entity_labels = sorted(set(train.labels) | set(validation.labels if validation else ()))
    tags = iob2_labels(entity_labels)
    train_chunks = _encode(train, tokenizer, settings, tags)
    if not train_chunks:
        raise UsageError("the training corpus has no words; fix: pass a non-empty corpus")
    val = (
        ValidationSet(validation, _encode(validation, tokenizer, settings, tags))
        if validation
        else None
    )
    recipe = corpus_recipe(train, settings)
    encoded_at = time.perf_counter()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    identity = loadable_identity(base_model)
    checkpoint = None
    if checkpoint_dir is not None:
        key = [
            config_digest(settings),
            _corpus_ids(train, validation),
            identity.name,
            identity.sha256,
            tags,
        ]
        checkpoint = EpochCheckpoint(checkpoint_dir, config_digest(key))
    saved = checkpoint.load() if checkpoint is not None else None
    restarts = saved.restarts if saved is not None else 0
    while True:  # seed 000, App. A: a run stalled on predicting only "O" is started again
        torch.manual_seed(settings.seed + restarts)
        model, new_head = _load_model(backbone, tags)
        model = fix_input_embeddings(model, settings).to(device)
        run = settings.model_copy(update={"seed": settings.seed + restarts})
        fit = _Fit(recipe, pad, new_head, budget, checkpoint, restarts, saved)
        epochs, best_epoch = _fit(model, train_chunks, val, tags, run, fit, progress)
        saved = None  # a restart starts from the base model
        if not stalled(epochs, best_epoch) or restarts >= settings.stall_restarts:
            break
        restarts += 1
    record = AnnotatorRecord(
        base_model=identity.name,
        base_model_sha256=identity.sha256,
        labels=tuple(entity_labels),
        tags=tuple(tags),
        settings=settings,
        settings_digest=config_digest(settings),
        best_epoch=best_epoch,
        epochs=tuple(epochs),
        train_chunks=len(train_chunks),
        validation_chunks=len(val.chunks) if val else 0,
        device=device.type,
        bf16=resolve_bf16(settings.bf16, device),
        grad_accumulation=settings.accumulation_for(device.type == "cuda"),
        num_threads=torch.get_num_threads(),
        restarts=restarts,
        stopped_early=len(epochs) < recipe.epochs,
        recipe=recipe,
        train_mentions=_mentions(train),
        embeddings_frozen=not model.get_input_embeddings().weight.requires_grad,
        timings={
            "encode_seconds": encoded_at - started,
            "train_seconds": sum(e.train_seconds for e in epochs),
            "eval_seconds": sum(e.eval_seconds for e in epochs),
            "total_seconds": time.perf_counter() - started,
        },
        provenance=make_provenance(
            source=identity.name,
            source_sha256=identity.sha256,
            config_digest=config_digest(settings),
            parents=tuple(_corpus_ids(train, validation)),
            notes={
                "stage": "train_annotator",
                "torch": torch.__version__,
                "recipe": "; ".join(recipe.reasons),
            },
        ),
    )
    save_annotator(model, tokenizer, record, out_dir)
    if checkpoint is not None:
        checkpoint.discard()
    return AnnotatorResult(model_dir=out_dir, record=record)


def stalled(epochs: list[EpochRecord], best_epoch: int) -> bool:
    """The kept epoch found no gold entity word at all on validation (only "O" predicted)."""
    metrics = next((e.metrics for e in epochs if e.epoch == best_epoch), None)
    return metrics is not None and metrics.support > 0 and metrics.recall == 0.0


@dataclass(frozen=True)
class _Fit:
    """What one training run needs besides the settings: recipe, pad id, whether the head is
    new, the CPU thread budget re-read before each epoch (None: threads pinned), and where
    to save the state after each epoch (restart number, and the saved state to resume)."""

    recipe: TrainingRecipe
    pad: int
    new_head: bool
    budget: ThreadBudget | None = None
    checkpoint: EpochCheckpoint | None = None
    restarts: int = 0
    saved: EpochState | None = None


def _fit(
    model: Any,
    train_chunks: list[EncodedChunk],
    validation: ValidationSet | None,
    tags: list[str],
    settings: AnnotatorSettings,
    fit: _Fit,
    progress: Progress | None,
) -> tuple[list[EpochRecord], int]:
    """Train for ``recipe.epochs`` (fewer when validation F1 stops improving); leave the best
    epoch's weights in ``model``."""
    recipe, pad = fit.recipe, fit.pad
    rng = random.Random(settings.seed)
    sampler = EpochSampler(train_chunks, recipe.phi_free_per_phi)
    steps = recipe.epochs * -(-sampler.per_epoch // settings.batch_size)
    if settings.max_steps is not None:
        steps = min(steps, settings.max_steps)
    optimizer, scheduler = _optimiser(model, settings, steps, fit.new_head)
    device = next(model.parameters()).device
    bf16 = resolve_bf16(settings.bf16, device)
    accumulation = settings.accumulation_for(device.type == "cuda")
    weights = tag_weights(tags, recipe.entity_weight)
    epochs: list[EpochRecord] = []
    best: tuple[float, int, dict[str, torch.Tensor]] | None = None
    per_step = settings.batch_size // accumulation
    left = steps  # optimiser steps; a max_steps recipe cuts its last epoch short
    first = 1
    if fit.saved is not None:  # resume after the saved epoch
        fit.saved.restore(model, optimizer, scheduler, rng)
        epochs, left, first = list(fit.saved.epochs), fit.saved.left, fit.saved.epoch + 1
        best = (fit.saved.best_score, fit.saved.best_epoch, fit.saved.best)
    for epoch in range(first, recipe.epochs + 1):
        threads = use_threads(fit.budget)
        t0 = time.perf_counter()
        loss = train_epoch(
            model, sampler.draw(rng), optimizer, scheduler,
            micro_batch=per_step, accumulation=accumulation,
            pad_id=pad, rng=rng, group_by_length=settings.group_by_length, bf16=bf16,
            stage=f"epoch {epoch}/{recipe.epochs}", progress=progress, tag_weights=weights,
            max_batches=left * accumulation,
        )  # fmt: skip
        left -= -(-sampler.per_epoch // settings.batch_size)
        t1 = time.perf_counter()
        metrics = validation_metrics(model, validation, tags, settings, pad) if validation else None
        epochs.append(
            EpochRecord(
                epoch=epoch,
                train_loss=loss,
                train_seconds=t1 - t0,
                eval_seconds=time.perf_counter() - t1,
                metrics=metrics,
                threads=threads,
            )
        )
        score = metrics.f1 if metrics else float(epoch)
        if best is None or score > best[0]:
            state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            best = (score, epoch, state)
        if _no_progress(best[0], epoch - best[1], recipe.patience, metrics is not None):
            break
        if left <= 0:  # max_steps reached
            break
        if fit.checkpoint is not None and epoch < recipe.epochs:
            snapshot = EpochState(
                epoch=epoch, restarts=fit.restarts, left=left, epochs=epochs, best_score=best[0],
                best_epoch=best[1], model=model.state_dict(), best=best[2],
                optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(),
                python_rng=rng.getstate(), torch_rng=torch.get_rng_state(),
            )  # fmt: skip
            fit.checkpoint.save(snapshot)
    assert best is not None
    if best[1] != epochs[-1].epoch:
        model.load_state_dict(best[2])
    return epochs, best[1]


def _no_progress(best_f1: float, epochs_since_best: int, patience: int, scored: bool) -> bool:
    """Early stop: validation F1 has not improved for ``patience`` epochs after finding something.

    ``patience`` is the recipe's (at least a quarter of the planned epochs). A run that has not
    yet found any entity keeps going: under sparse PHI a model often predicts only ``O`` for a
    while.
    """
    return scored and patience > 0 and best_f1 > 0 and epochs_since_best >= patience


def _mentions(corpus: Corpus) -> dict[str, int]:
    counts: dict[str, int] = {label: 0 for label in corpus.labels}
    for doc in corpus.documents:
        for span in doc.spans:
            counts[span.label] = counts.get(span.label, 0) + 1
    return dict(sorted(counts.items()))


def _corpus_ids(*corpora: Corpus | None) -> list[str]:
    """A digest per input corpus (its source hash when known, else a digest of its content)."""
    return [c.provenance.source_sha256 or config_digest(c) for c in corpora if c is not None]


def save_annotator(model: Any, tokenizer: Any, record: AnnotatorRecord, out_dir: Path) -> None:
    """Weights, tokenizer and ``annotator.json`` into ``out_dir``, all or nothing."""
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        atomic_write_text(tmp / RECORD_FILE, record.model_dump_json(indent=2))
