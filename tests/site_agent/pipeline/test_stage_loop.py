"""The stage runner: stage.json, skipping unchanged stages, --from, failures, registry rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.errors import QualityGateError, UsageError
from site_agent.config import SiteConfig, build_site_config
from site_agent.pipeline.stage import Stage, StageContext, StageOutput, read_record
from site_agent.stages.pipeline import run_pipeline
from site_agent.stages.registry import STAGES, check_registry

CALLS: list[str] = []


def _first(ctx: StageContext) -> StageOutput:
    CALLS.append("first")
    out = ctx.stage_dir / "a.txt"
    out.write_text(ctx.config.corpus.path.read_text() + f"|seed={ctx.config.split.seed}")
    return StageOutput(artifacts={"a": out}, summary={"n": 1})


def _second(ctx: StageContext) -> StageOutput:
    CALLS.append("second")
    if ctx.config.split.seed == 99:
        raise QualityGateError("second refuses seed 99")
    out = ctx.stage_dir / "b.txt"
    out.write_text(ctx.inputs["first.a"].read_text().upper())
    return StageOutput(artifacts={"b": out})


def _third(ctx: StageContext) -> StageOutput:
    CALLS.append("third")
    if ctx.config.pseudonymise.mode == "filter":
        raise QualityGateError("third refuses filter mode")
    out = ctx.stage_dir / "c.txt"
    out.write_text(ctx.inputs["second.b"].read_text() + "!")
    return StageOutput(artifacts={"c": out})


TOY = (
    Stage("first", _first, lambda c: c.split, sources=lambda c: {"corpus": c.corpus.path}),
    Stage("second", _second, lambda c: {}, inputs=("first.a",)),
    Stage("third", _third, lambda c: c.pseudonymise, inputs=("second.b",)),
)


@pytest.fixture
def config(tmp_path: Path) -> SiteConfig:
    CALLS.clear()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello")
    return build_site_config(
        {"site_id": "toy", "corpus": {"path": str(corpus)}, "work_dir": str(tmp_path / "work")}
    )


def _run(config: SiteConfig, **kw: object) -> list[str]:
    return [r.status for r in run_pipeline(config, TOY, **kw)]  # type: ignore[arg-type]


def test_stages_write_records_and_artifacts(config: SiteConfig) -> None:
    assert _run(config) == ["ran", "ran", "ran"]
    assert (config.work_dir / "03-third" / "c.txt").read_text() == "HELLO|SEED=13!"
    record = read_record(config.work_dir / "01-first")
    assert record is not None and record.status == "completed"
    assert set(record.input_hashes) == {"corpus"} and record.artifacts == {"a": "a.txt"}
    assert record.summary == {"n": 1} and "torch" in record.package_versions
    assert record.finished_at >= record.started_at
    downstream = read_record(config.work_dir / "02-second")
    assert downstream is not None
    assert downstream.input_hashes == {"first.a": record.artifact_hashes["a"]}


def test_rerun_skips_unchanged_stages(config: SiteConfig) -> None:
    _run(config)
    CALLS.clear()
    assert _run(config) == ["skipped", "skipped", "skipped"]
    assert CALLS == []


def test_changed_settings_rerun_that_stage_and_changed_outputs_propagate(
    config: SiteConfig,
) -> None:
    _run(config)
    CALLS.clear()
    changed = config.model_copy(update={"split": config.split.model_copy(update={"seed": 7})})
    assert _run(changed) == ["ran", "ran", "ran"]
    CALLS.clear()
    unrelated = changed.model_copy(
        update={"pseudonymise": changed.pseudonymise.model_copy(update={"locale": "en_US"})}
    )
    assert _run(unrelated) == ["skipped", "skipped", "ran"]


def test_changed_source_file_reruns_everything(config: SiteConfig) -> None:
    _run(config)
    config.corpus.path.write_text("other")
    assert _run(config) == ["ran", "ran", "ran"]


def test_missing_artifact_reruns_the_stage(config: SiteConfig) -> None:
    _run(config)
    (config.work_dir / "02-second" / "b.txt").unlink()
    assert _run(config) == ["skipped", "ran", "skipped"]


def test_from_forces_that_stage_and_every_later_one(config: SiteConfig) -> None:
    _run(config)
    CALLS.clear()
    assert _run(config, from_stage="second") == ["skipped", "ran", "ran"]
    assert CALLS == ["second", "third"]
    with pytest.raises(UsageError, match="unknown stage 'nope'"):
        _run(config, from_stage="nope")


def test_failure_is_recorded_and_stops_the_pipeline(config: SiteConfig) -> None:
    failing = config.model_copy(
        update={"pseudonymise": config.pseudonymise.model_copy(update={"mode": "filter"})}
    )
    runs: list = []
    with pytest.raises(QualityGateError):
        run_pipeline(failing, TOY, runs=runs)
    assert [r.status for r in runs] == ["ran", "ran", "failed"]
    record = json.loads((config.work_dir / "03-third" / "stage.json").read_text())
    assert record["status"] == "failed" and "filter" in record["error"]
    assert _run(failing.model_copy(update={"pseudonymise": config.pseudonymise}))[-1] == "ran"


def test_registry_order_and_held_out_test_split() -> None:
    check_registry(STAGES)
    assert [s.name for s in STAGES] == [
        "split",
        "pseudonymise",
        "annotator",
        "adapt",
        "generate",
        "annotate",
        "audit",
        "train-synthetic",
        "export",
    ]
    readers = {s.name for s in STAGES if "split.test" in s.inputs}
    assert readers == {"train-synthetic"}
    sneaky = Stage("peek", _first, lambda c: {}, inputs=("split.test",))
    with pytest.raises(ValueError, match="held out"):
        check_registry((STAGES[0], sneaky))
    with pytest.raises(ValueError, match="does not run before"):
        check_registry((TOY[1], TOY[0]))


def test_every_registered_stage_has_a_stable_settings_digest(config: SiteConfig) -> None:
    from site_agent.pipeline.stage_loop import settings_digest

    digests = [settings_digest(stage, config) for stage in STAGES]
    assert digests == [settings_digest(stage, config) for stage in STAGES]
    changed = config.model_copy(
        update={"generation": config.generation.model_copy(update={"top_p": 0.9})}
    )
    moved = [a != settings_digest(s, changed) for s, a in zip(STAGES, digests, strict=True)]
    assert [s.name for s, m in zip(STAGES, moved, strict=True) if m] == ["generate", "export"]


def _resumable(ctx: StageContext) -> StageOutput:
    partial = ctx.stage_dir / "partial.txt"
    seen = partial.read_text() if partial.exists() else ""
    partial.write_text(seen + "x")
    if ctx.config.pseudonymise.mode == "filter":
        raise RuntimeError("crashed half way")
    return StageOutput(artifacts={"partial": partial}, summary={"resumed_from": seen})


RESUMABLE = (Stage("gen", _resumable, lambda c: {"locale": c.pseudonymise.locale}),)


def test_failed_stage_resumes_and_changed_settings_start_fresh(config: SiteConfig) -> None:
    crashing = config.model_copy(
        update={"pseudonymise": config.pseudonymise.model_copy(update={"mode": "filter"})}
    )
    with pytest.raises(RuntimeError):
        run_pipeline(crashing, RESUMABLE)
    (run,) = run_pipeline(config, RESUMABLE)
    assert run.record is not None and run.record.summary == {"resumed_from": "x"}
    other = config.model_copy(
        update={"pseudonymise": config.pseudonymise.model_copy(update={"locale": "en_US"})}
    )
    (run,) = run_pipeline(other, RESUMABLE)
    assert run.record is not None and run.record.summary == {"resumed_from": ""}
    (run,) = run_pipeline(other, RESUMABLE, from_stage="gen")
    assert run.record is not None and run.record.summary == {"resumed_from": ""}


def test_from_forgets_later_records_before_running(config: SiteConfig) -> None:
    _run(config)
    assert (config.work_dir / "03-third" / "stage.json").exists()
    failing = config.model_copy(update={"split": config.split.model_copy(update={"seed": 99})})
    with pytest.raises(QualityGateError):
        run_pipeline(failing, TOY, from_stage="second")
    assert not (config.work_dir / "03-third" / "stage.json").exists()
    assert _run(config) == ["ran", "ran", "ran"]  # first re-ran with seed 99, so all follow


def _stopped(ctx: StageContext) -> StageOutput:
    partial = ctx.stage_dir / "partial.txt"
    seen = partial.read_text() if partial.exists() else ""
    partial.write_text(seen + "x")
    if not seen:
        raise KeyboardInterrupt
    return StageOutput(artifacts={"partial": partial}, summary={"resumed_from": seen})


def test_a_stopped_stage_says_what_is_kept_and_the_same_command_goes_on(
    config: SiteConfig,
) -> None:
    """Ctrl-C in a stage: status "stopped", no record, a line saying how to go on; the next
    run continues from what the stage saved."""
    import io

    from rich.console import Console

    stages = (TOY[0], Stage("gen", _stopped, lambda c: {}))
    shown = io.StringIO()
    runs: list = []
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(config, stages, console=Console(file=shown, width=300), runs=runs)
    assert [r.status for r in runs] == ["ran", "stopped"]
    assert read_record(config.work_dir / "02-gen") is None
    said = shown.getvalue()
    assert "the gen stage was stopped (Ctrl-C) after 0 min" in said
    assert "run the same command again to go on" in said
    (_, run) = run_pipeline(config, stages, console=Console(file=io.StringIO()))
    assert run.record is not None and run.record.summary == {"resumed_from": "x"}


SIGTERMED = """
import sys, time
from pathlib import Path
from site_agent.config import build_site_config
from site_agent.pipeline.stage import Stage
from site_agent.stages.pipeline import run_pipeline

def slow(ctx):
    print("running", flush=True)
    time.sleep(60)

corpus = Path(sys.argv[1]) / "corpus.txt"
corpus.write_text("hello")
config = build_site_config(
    {"site_id": "t", "corpus": {"path": str(corpus)}, "work_dir": sys.argv[1] + "/work"}
)
run_pipeline(config, (Stage("slow", slow, lambda c: {}),))
"""


def test_sigterm_in_a_stage_exits_143_saying_how_to_go_on(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, "-c", SIGTERMED, str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "running"
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 143
    assert "the slow stage was stopped (SIGTERM)" in " ".join(err.split())
