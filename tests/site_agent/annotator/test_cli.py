"""``site-agent annotate train|apply`` wire the annotator to files and exit codes."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from protocol import Corpus
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import QualityGateError
from site_agent.cli import app

runner = CliRunner()


def test_train_then_apply(
    tmp_path: Path, pattern_corpora: tuple[Corpus, Corpus], encoder_dir: Path
) -> None:
    train, validation = pattern_corpora
    write_corpus(train, tmp_path / "train.jsonl")
    write_corpus(validation, tmp_path / "dev.jsonl")
    model = tmp_path / "annotator"
    args = ["annotate", "train", "--train", str(tmp_path / "train.jsonl"),
            "--validation", str(tmp_path / "dev.jsonl"), "--base-model", str(encoder_dir),
            "--out", str(model), "--epochs", "1"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "epoch 1: loss" in result.output and (model / "annotator.json").is_file()

    out = tmp_path / "labelled.jsonl"
    result = runner.invoke(app, ["annotate", "apply", str(model), str(tmp_path / "dev.jsonl"),
                                 "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    labelled = read_corpus(out)
    assert [d.id for d in labelled.documents] == [d.id for d in validation.documents]
    assert labelled.provenance.notes["annotator"] == str(model)

    # one epoch of a tiny model cannot reach recall 0.99: the gate refuses it
    result = runner.invoke(app, [*args, "--min-recall", "0.99"])
    assert isinstance(result.exception, QualityGateError)
    assert result.exception.exit_code == 3
