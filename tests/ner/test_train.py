"""Training learns pattern-like PII, records how, and saves a model pipeline() can load."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus
from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, AnnotatorResult, EpochRecord
from tests.ner.conftest import FAST


def test_loss_decreases_and_validation_recall_rises(trained: AnnotatorResult) -> None:
    epochs = trained.record.epochs
    assert len(epochs) == FAST.epochs
    assert epochs[-1].train_loss < 0.5 * epochs[0].train_loss
    metrics = trained.best_metrics
    assert metrics is not None and metrics.support > 0
    assert metrics.recall > 0.5 and metrics.f1 > 0.5
    # span scores from shared.metrics on the decoded spans
    assert metrics.overlap_recall is not None and metrics.overlap_recall > 0.5
    assert metrics.exact_f1 is not None and metrics.doc_leakage is not None
    assert 0.0 <= metrics.doc_leakage < 1.0


def test_best_epoch_is_the_best_validation_f1(trained: AnnotatorResult) -> None:
    scores = {e.epoch: e.metrics.f1 for e in trained.record.epochs if e.metrics}
    assert scores[trained.record.best_epoch] == max(scores.values())


def test_annotator_json_records_provenance(trained: AnnotatorResult) -> None:
    path = trained.model_dir / "annotator.json"
    record = AnnotatorRecord.model_validate(json.loads(path.read_text()))
    assert record == trained.record
    assert record.labels == ("DATE", "ID", "LOC", "NAME")
    assert record.tags[0] == "O" and "B-NAME" in record.tags and "I-DATE" in record.tags
    assert record.settings == FAST and len(record.settings_digest) == 64
    assert record.train_chunks > 48  # some notes are longer than one 24-word chunk
    assert record.timings["train_seconds"] > 0
    assert record.provenance.tool_version and len(record.provenance.parents) == 2


def test_saved_model_loads_in_transformers_pipeline(trained: AnnotatorResult) -> None:
    from transformers import AutoConfig, pipeline

    ner = pipeline("token-classification", model=str(trained.model_dir), device="cpu")
    saved = AutoConfig.from_pretrained(trained.model_dir)
    assert saved.id2label[0] == "O" and set(saved.label2id) == set(trained.record.tags)
    assert ner.model.config.num_labels == len(trained.record.tags)
    found = ner("Paciente Ana García nacido el 19/02/1962 en Madrid. NHC 198418.")
    assert isinstance(found, list)
    assert all(item["entity"] in trained.record.tags for item in found)


def test_bf16_autocast_path_trains_and_is_recorded(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    from ner.train import train_annotator

    train, _ = pattern_corpora
    settings = FAST.model_copy(update={"epochs": 1, "bf16": True, "grad_accumulation": 2})
    result = train_annotator(train, None, encoder_dir, settings, tmp_path / "bf16")
    assert result.record.bf16 is True and result.record.best_epoch == 1
    assert result.record.grad_accumulation == 2
    assert result.record.num_threads == FAST.num_threads
    assert result.best_metrics is None  # no validation corpus
    assert math.isfinite(result.record.epochs[0].train_loss)


@pytest.mark.parametrize(
    ("flag", "device", "cuda_bf16", "cpu_bf16", "amx", "expected"),
    [
        (True, "cpu", False, False, False, True),
        (False, "cuda", True, True, True, False),
        (None, "cuda", True, False, False, True),
        (None, "cuda", False, True, True, False),
        # AVX-512 BF16 without AMX: bf16 (measured 1.7-2.4x training, 2.3x inference)
        (None, "cpu", True, True, False, True),
        (None, "cpu", True, False, True, True),  # AMX
        (None, "cpu", True, False, False, False),  # neither: float32
    ],
)
def test_bf16_auto_follows_the_hardware(
    monkeypatch: pytest.MonkeyPatch,
    flag: bool | None,
    device: str,
    cuda_bf16: bool,
    cpu_bf16: bool,
    amx: bool,
    expected: bool,
) -> None:
    import torch

    from ner.loop import resolve_bf16

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: cuda_bf16)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: cpu_bf16, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    assert resolve_bf16(flag, torch.device(device)) is expected


class FakeBudget:
    """A thread budget that offers, epoch after epoch, the threads it was given."""

    def __init__(self, offers: list[int]) -> None:
        self.offers = list(offers)

    def threads(self) -> int:
        return self.offers.pop(0) if len(self.offers) > 1 else self.offers[0]


@pytest.mark.usefixtures("torch_threads")
def test_unpinned_threads_follow_the_budget_each_epoch(
    pattern_corpora: tuple[Corpus, Corpus],
    encoder_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``num_threads`` unset the budget is read before every epoch and each epoch records
    the threads it ran on; pinned, the budget is never asked."""
    from ner import train as module

    train, _ = pattern_corpora
    budgets: list[FakeBudget] = []

    def budget() -> FakeBudget:
        budgets.append(FakeBudget([2, 1, 2]))
        return budgets[-1]

    monkeypatch.setattr(module, "ThreadBudget", budget)
    free = FAST.model_copy(update={"epochs": 3, "num_threads": None})
    result = module.train_annotator(train, None, encoder_dir, free, tmp_path / "free")
    assert [e.threads for e in result.record.epochs] == [2, 1, 2]
    assert len(budgets) == 1
    pinned = FAST.model_copy(update={"epochs": 2, "num_threads": 1})
    result = module.train_annotator(train, None, encoder_dir, pinned, tmp_path / "pinned")
    assert [e.threads for e in result.record.epochs] == [1, 1]
    assert len(budgets) == 1


def _epoch(epoch: int, recall: float, support: int = 5) -> EpochRecord:
    metrics = AnnotatorMetrics(
        precision=recall, recall=recall, f1=recall, entity_precision=recall,
        entity_recall=recall, entity_f1=recall, support=support,
    )  # fmt: skip
    return EpochRecord(epoch=epoch, train_loss=1.0, train_seconds=1.0, metrics=metrics)


def test_stalled_means_the_kept_epoch_found_nothing() -> None:
    from ner.train import stalled

    assert stalled([_epoch(1, 0.0), _epoch(2, 0.0)], 1)
    assert not stalled([_epoch(1, 0.0), _epoch(2, 0.3)], 2)
    assert not stalled([_epoch(1, 0.0, support=0)], 1)  # nothing to find
    no_validation = [EpochRecord(epoch=1, train_loss=1.0, train_seconds=1.0)]
    assert not stalled(no_validation, 1)


@pytest.mark.parametrize(("allowed", "expected"), [(0, 0), (1, 1), (3, 3)])
def test_a_stalled_run_is_restarted_with_the_next_seed(
    monkeypatch: pytest.MonkeyPatch,
    pattern_corpora: tuple[Corpus, Corpus],
    encoder_dir: Path,
    tmp_path: Path,
    allowed: int,
    expected: int,
) -> None:
    import ner.train as train_module

    seeds: list[int] = []
    real_fit = train_module._fit

    def fit(*args: Any, **kwargs: Any) -> Any:
        seeds.append(args[4].seed)  # the run settings
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(train_module, "_fit", fit)
    monkeypatch.setattr(train_module, "stalled", lambda epochs, best: True)
    train = pattern_corpora[0]
    settings = FAST.model_copy(update={"epochs": 1, "stall_restarts": allowed})
    small = Corpus(documents=train.documents[:8])
    result = train_module.train_annotator(small, None, encoder_dir, settings, tmp_path / "m")
    assert result.record.restarts == expected
    assert seeds == [FAST.seed + i for i in range(expected + 1)]


@pytest.mark.parametrize(
    ("vocab", "setting", "frozen"),
    [(20000, None, True), (400, None, False), (400, True, True), (20000, False, False)],
)
def test_embeddings_freeze_when_they_dominate_or_when_asked(
    vocab: int, setting: bool | None, frozen: bool
) -> None:
    from transformers import BertConfig, BertForTokenClassification

    from ner.train import fix_input_embeddings
    from protocol.annotator import AnnotatorSettings

    config = BertConfig(
        vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, num_labels=3,
    )  # fmt: skip
    settings = AnnotatorSettings(freeze_embeddings=setting)
    model = fix_input_embeddings(BertForTokenClassification(config), settings)
    assert model.get_input_embeddings().weight.requires_grad is not frozen
    assert all(p.requires_grad for n, p in model.named_parameters() if "word_embeddings" not in n)


def test_frozen_embeddings_stay_as_pre_trained(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    from ner.train import train_annotator

    train, val = pattern_corpora
    settings = FAST.model_copy(update={"epochs": 1, "freeze_embeddings": True})
    result = train_annotator(train, val, encoder_dir, settings, tmp_path / "frozen")
    assert result.record.embeddings_frozen
    before = load_file(encoder_dir / "model.safetensors")
    after = load_file(result.model_dir / "model.safetensors")
    key = next(k for k in before if k.endswith("word_embeddings.weight"))
    assert (after["bert." + key.removeprefix("bert.")] == before[key]).all()
    layer = next(k for k in before if k.endswith("layer.0.attention.self.query.weight"))
    assert not (after["bert." + layer.removeprefix("bert.")] == before[layer]).all()


@pytest.mark.parametrize(
    ("best_f1", "since_best", "patience", "scored", "stop"),
    [
        (0.6, 3, 3, True, True),
        (0.6, 2, 3, True, False),
        (0.0, 9, 3, True, False),  # nothing found yet: keep going (sparse PHI starts late)
        (0.6, 9, 0, True, False),  # patience 0: off
        (0.6, 9, 3, False, False),  # no validation corpus: nothing to judge by
    ],
)
def test_early_stop_needs_a_found_entity_and_patience(
    best_f1: float, since_best: int, patience: int, scored: bool, stop: bool
) -> None:
    from ner.train import _no_progress

    assert _no_progress(best_f1, since_best, patience, scored) is stop


def test_training_stops_early_once_validation_f1_stalls(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    from ner.train import train_annotator

    train, validation = pattern_corpora
    settings = FAST.model_copy(update={"epochs": 30, "patience": 1, "stall_restarts": 0})
    record = train_annotator(train, validation, encoder_dir, settings, tmp_path / "m").record
    recipe = record.recipe
    assert recipe is not None and recipe.epochs == 30
    assert recipe.patience == 8  # at least a quarter of the planned epochs
    assert record.stopped_early and len(record.epochs) == record.best_epoch + 8


def test_max_steps_bounds_the_run_mid_epoch(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    """``max_steps`` stops training after that many optimiser steps, cutting the last epoch
    short: the recipe says so, and only that many batches are trained."""
    from ner.train import train_annotator

    train, _ = pattern_corpora
    seen: dict[str, int] = {}

    def progress(stage: str, done: int, total: int) -> None:
        seen[stage] = total

    full = FAST.model_copy(update={"epochs": 2})
    per_epoch = train_annotator(train, None, encoder_dir, full, tmp_path / "a").record
    assert per_epoch.recipe is not None
    steps_per_epoch = per_epoch.recipe.steps // 2
    assert steps_per_epoch >= 2  # the cut below lands inside the second epoch
    capped = full.model_copy(update={"max_steps": steps_per_epoch + 1})
    record = train_annotator(train, None, encoder_dir, capped, tmp_path / "b", progress).record
    assert record.recipe is not None and record.recipe.steps == steps_per_epoch + 1
    assert "max_steps" in " ".join(record.recipe.reasons)
    assert len(record.epochs) == 2
    micro = record.grad_accumulation  # micro-batches per optimiser step
    first, second = seen.values()
    assert first >= (steps_per_epoch - 1) * micro  # a whole epoch (its last step may be short)
    assert second == micro  # the one step max_steps leaves
