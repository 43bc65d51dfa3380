"""A training run stopped between epochs resumes after its last finished epoch and ends with
the weights of an unbroken run; a checkpoint of another run is never mixed in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from protocol import Corpus
from protocol.annotator import AnnotatorResult
from tests.ner.conftest import FAST


class Stopped(Exception):
    """Stands for the process dying (a kill leaves no chance to clean up either)."""


def _weights(result: AnnotatorResult) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(result.model_dir / "model.safetensors"))


def _counting(monkeypatch: pytest.MonkeyPatch, stop_at: int | None = None) -> list[int]:
    """Count the epochs trained; with ``stop_at``, die while validating that epoch."""
    import ner.train

    trained: list[int] = []
    train_epoch, validate = ner.train.train_epoch, ner.train.validation_metrics

    def counted(*args: Any, **kwargs: Any) -> float:
        trained.append(1)
        return train_epoch(*args, **kwargs)

    def dying(*args: Any, **kwargs: Any) -> Any:
        if stop_at is not None and len(trained) == stop_at:
            raise Stopped
        return validate(*args, **kwargs)

    monkeypatch.setattr(ner.train, "train_epoch", counted)
    monkeypatch.setattr(ner.train, "validation_metrics", dying)
    return trained


def _stopped_during(
    epoch: int, corpora: tuple[Corpus, Corpus], encoder_dir: Path, out: Path
) -> None:
    """Train with checkpoints beside ``out`` and die while validating ``epoch``."""
    from ner.train import train_annotator

    resume = out.with_name(f"{out.name}.r")
    with pytest.MonkeyPatch.context() as patch:
        _counting(patch, stop_at=epoch)
        with pytest.raises(Stopped):
            train_annotator(*corpora, encoder_dir, FAST, out, checkpoint_dir=resume)


def test_a_run_stopped_after_two_epochs_resumes_to_the_same_weights(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    from ner.resume import STATE_FILE
    from ner.train import train_annotator

    train, validation = pattern_corpora
    with pytest.MonkeyPatch.context() as patch:
        unbroken_epochs = _counting(patch)
        unbroken = train_annotator(
            train, validation, encoder_dir, FAST, tmp_path / "a", checkpoint_dir=tmp_path / "a.r"
        )
    assert len(unbroken_epochs) == FAST.epochs == 4
    assert not (tmp_path / "a.r").exists()  # removed once the model is saved

    _stopped_during(3, pattern_corpora, encoder_dir, tmp_path / "b")
    assert (tmp_path / "b.r" / STATE_FILE).is_file() and not (tmp_path / "b").exists()
    saved = torch.load(tmp_path / "b.r" / STATE_FILE, weights_only=True)
    assert saved["epoch"] == 2  # epoch 3 died before its checkpoint

    with pytest.MonkeyPatch.context() as patch:
        resumed_epochs = _counting(patch)
        resumed = train_annotator(
            train, validation, encoder_dir, FAST, tmp_path / "b", checkpoint_dir=tmp_path / "b.r"
        )
    assert len(resumed_epochs) == 2  # epochs 3 and 4 only
    assert [e.epoch for e in resumed.record.epochs] == [1, 2, 3, 4]
    assert [e.train_loss for e in resumed.record.epochs] == [
        e.train_loss for e in unbroken.record.epochs
    ]
    assert resumed.record.best_epoch == unbroken.record.best_epoch
    a, b = _weights(unbroken), _weights(resumed)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not (tmp_path / "b.r").exists()


def test_a_checkpoint_of_other_settings_is_set_aside(
    pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path, tmp_path: Path
) -> None:
    from ner.train import train_annotator

    train, validation = pattern_corpora
    _stopped_during(2, pattern_corpora, encoder_dir, tmp_path / "m")
    assert (tmp_path / "m.r").is_dir()
    other = FAST.model_copy(update={"seed": FAST.seed + 1})
    with pytest.MonkeyPatch.context() as patch:
        epochs = _counting(patch)
        result = train_annotator(
            train, validation, encoder_dir, other, tmp_path / "m", checkpoint_dir=tmp_path / "m.r"
        )
    assert len(epochs) == FAST.epochs  # started over: nothing of the seed-3 run was reused
    assert result.record.settings.seed == FAST.seed + 1


def test_a_damaged_checkpoint_starts_the_run_over(tmp_path: Path) -> None:
    from ner.resume import STATE_FILE, EpochCheckpoint

    root = tmp_path / "r"
    root.mkdir()
    (root / STATE_FILE).write_bytes(b"not a torch file")
    assert EpochCheckpoint(root, "digest").load() is None
    assert not root.exists()
