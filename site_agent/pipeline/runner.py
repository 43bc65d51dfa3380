"""The site pipeline: run the registered stages in order, skipping what is already done.

The order is :data:`site_agent.pipeline.registry.STAGES`. Each stage gets a folder
``<work_dir>/<NN-name>/`` with a ``stage.json``. A stage re-runs when its settings digest or
any input hash changed, when its artifacts are gone or differ on disk from the hashes its
record names, or when ``from_stage`` names it or an earlier stage.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from pydantic_core import to_jsonable_python
from rich.console import Console
from rich.progress import Progress

from shared.atomic import atomic_write_text
from shared.errors import UsageError
from shared.provenance import config_digest, sha256_tree, tool_version
from site_agent.config import SiteConfig
from site_agent.pipeline.progress import stage_progress
from site_agent.pipeline.stage import (
    STAGE_RECORD,
    Stage,
    StageContext,
    StageOutput,
    StageRecord,
    artifact_path,
    read_record,
)

PACKAGES = ("torch", "transformers", "peft", "faker", "pydantic", "cryptography", "vllm")


@dataclass(frozen=True)
class StageRun:
    """How one stage went in this invocation."""

    name: str
    status: str  # "ran" | "skipped" | "failed"
    seconds: float
    record: StageRecord | None


def stage_folder(work_dir: Path, index: int, stage: Stage) -> Path:
    return work_dir / f"{index:02d}-{stage.name}"


def settings_digest(stage: Stage, config: SiteConfig) -> str:
    """SHA-256 of the config slice the stage depends on (models nested in dicts included)."""
    return config_digest(to_jsonable_python(stage.settings(config)))


def folder_of(work_dir: Path, name: str) -> Path:
    """The folder of the registered stage ``name`` under ``work_dir``."""
    from site_agent.pipeline.registry import STAGES

    index = [s.name for s in STAGES].index(name)
    return stage_folder(work_dir, index + 1, STAGES[index])


def stage_artifact(work_dir: Path, stage: str, artifact: str) -> Path | None:
    """Where the last completed run of ``stage`` put ``artifact``, read from its ``stage.json``
    (None when the stage has not completed or made no such artifact)."""
    folder = folder_of(work_dir, stage)
    record = read_record(folder)
    if record is None or record.status != "completed" or artifact not in record.artifacts:
        return None
    return artifact_path(folder, record.artifacts[artifact])


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def resolve_inputs(
    stage: Stage,
    folders: dict[str, Path],
    records: dict[str, StageRecord],
    fix: str = "re-run with --from {upstream}",
) -> tuple[dict[str, Path], dict[str, str]]:
    """The paths and recorded hashes of the upstream artifacts ``stage`` reads."""
    paths: dict[str, Path] = {}
    hashes: dict[str, str] = {}
    for key in stage.inputs:
        upstream, _, artifact = key.partition(".")
        record = records.get(upstream)
        if record is None or artifact not in record.artifacts:
            raise UsageError(
                f"stage {stage.name!r} needs {key!r}, which stage {upstream!r} did not produce; "
                f"fix: {fix.format(upstream=upstream)}"
            )
        paths[key] = artifact_path(folders[upstream], record.artifacts[artifact])
        hashes[key] = record.artifact_hashes[artifact]
    return paths, hashes


def artifacts_on_disk(record: StageRecord, folder: Path) -> dict[str, str] | None:
    """The recorded artifacts hashed as they are on disk now; None when one is missing."""
    hashes: dict[str, str] = {}
    for name, stored in record.artifacts.items():
        path = artifact_path(folder, stored)
        if not path.exists():
            return None
        hashes[name] = sha256_tree(path)
    return hashes


def can_skip(record: StageRecord | None, digest: str, inputs: dict[str, str], folder: Path) -> bool:
    """True when the last run completed with the same settings and inputs, and every artifact
    on disk still has the hash recorded when the stage wrote it.

    ``stage.json`` is only a claim: a file replaced after its stage ran (an audit report
    written by hand, a swapped training split) makes the stage run again. Downstream stages
    read their input hashes from records checked here, so those are hashes of the files on
    disk too; each artifact is hashed once per invocation.
    """
    if record is None or record.status != "completed":
        return False
    if record.config_digest != digest or record.input_hashes != inputs:
        return False
    return artifacts_on_disk(record, folder) == record.artifact_hashes


def _stored(folder: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _record(
    stage: Stage,
    folder: Path,
    digest: str,
    inputs: dict[str, str],
    started: datetime,
    output: StageOutput | None,
    error: str | None = None,
) -> StageRecord:
    finished = datetime.now(UTC)
    artifacts = output.artifacts if output else {}
    return StageRecord(
        stage=stage.name,
        status="completed" if error is None else "failed",
        config_digest=digest,
        input_hashes=inputs,
        artifacts={k: _stored(folder, p) for k, p in artifacts.items()},
        artifact_hashes={k: sha256_tree(p) for k, p in artifacts.items()},
        summary=output.summary if output else {},
        package_versions=package_versions(),
        tool_version=tool_version(),
        started_at=started,
        finished_at=finished,
        seconds=round((finished - started).total_seconds(), 3),
        error=error,
    )


def _write(folder: Path, record: StageRecord) -> None:
    atomic_write_text(folder / STAGE_RECORD, record.model_dump_json(indent=2))


def run_stage(
    stage: Stage,
    config: SiteConfig,
    folder: Path,
    inputs: dict[str, Path],
    hashes: dict[str, str],
    progress: Progress | None = None,
) -> StageRecord:
    """Run one stage and write its ``stage.json`` (also on failure, then re-raise).

    Engines draw their bars on ``progress`` when given (a caller's live display), else on a
    display of the stage's own."""
    folder.mkdir(parents=True, exist_ok=True)
    digest = settings_digest(stage, config)
    started = datetime.now(UTC)
    try:
        with contextlib.nullcontext(progress) if progress else stage_progress() as shown:
            output = stage.run(StageContext(config, folder, inputs, hashes, shown))
    except Exception as exc:
        _write(folder, _record(stage, folder, digest, hashes, started, None, error=str(exc)))
        raise
    record = _record(stage, folder, digest, hashes, started, output)
    _write(folder, record)
    return record


def prepare_folder(
    folder: Path, previous: StageRecord | None, digest: str, inputs: dict[str, str], fresh: bool
) -> None:
    """Empty the stage folder when its content is stale; keep it when a run can resume.

    Stale: a forced restart, or a record for other settings or inputs. A folder without a
    record, or with a failed record for the same settings and inputs, is kept so that a
    resumable stage (generation) continues where it stopped.
    """
    same = previous is not None and previous.config_digest == digest
    same = same and previous is not None and previous.input_hashes == inputs
    if folder.exists() and (fresh or (previous is not None and not same)):
        shutil.rmtree(folder)


def _invalidate(folders: Sequence[Path]) -> None:
    """Forget the records of stages that ``--from`` restarts, before any of them runs."""
    for folder in folders:
        (folder / STAGE_RECORD).unlink(missing_ok=True)


def _check_from(stages: Sequence[Stage], from_stage: str | None) -> int:
    names = [s.name for s in stages]
    if from_stage is None:
        return len(stages)
    if from_stage not in names:
        raise UsageError(f"unknown stage {from_stage!r} for --from; fix: use one of {names}")
    return names.index(from_stage)


def apply_device(device: str) -> None:
    """Honour ``device``: hide CUDA for ``cpu``; refuse ``cuda`` when none is visible.

    The engines pick CUDA by themselves when they see it, so ``cpu`` works by hiding it
    before torch initialises CUDA.
    """
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    elif device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError("device = 'cuda' but no CUDA device is visible; fix: use 'auto'")


def preflight(config: SiteConfig) -> None:
    """Checks that would otherwise fail hours in: device, model names, backend (the audit
    policy is validated with the config).

    Model names are resolved offline (nothing is fetched or converted here).
    """
    from site_agent.generate.backend import check_backend_name
    from site_agent.models.references import check_model_references

    apply_device(config.device)
    check_model_references(config)
    check_backend_name(config.generation.backend)


def run_pipeline(
    config: SiteConfig,
    stages: Sequence[Stage] | None = None,
    from_stage: str | None = None,
    console: Console | None = None,
    runs: list[StageRun] | None = None,
) -> list[StageRun]:
    """Run every stage in order; returns (and appends to ``runs``) what ran and was skipped."""
    from site_agent.pipeline.registry import STAGES, check_registry

    stages = STAGES if stages is None else stages
    check_registry(stages)
    preflight(config)
    console = console or Console(stderr=True)
    forced_from = _check_from(stages, from_stage)
    folders = {s.name: stage_folder(config.work_dir, i, s) for i, s in enumerate(stages, 1)}
    records: dict[str, StageRecord] = {}
    runs = [] if runs is None else runs
    restarted = [folders[s.name] for s in stages[forced_from:]]
    fresh = set(restarted)
    _invalidate(restarted)
    for index, stage in enumerate(stages):
        folder = folders[stage.name]
        paths, hashes = resolve_inputs(stage, folders, records)
        hashes.update({k: sha256_tree(p) for k, p in stage.sources(config).items()})
        previous = read_record(folder)
        digest = settings_digest(stage, config)
        if index < forced_from and can_skip(previous, digest, hashes, folder):
            assert previous is not None
            console.print(f"[dim]= {stage.name}: unchanged, skipped[/]")
            records[stage.name] = previous
            runs.append(StageRun(stage.name, "skipped", 0.0, previous))
            continue
        console.rule(f"[bold]{index + 1:02d} {stage.name}[/] {stage.description}")
        prepare_folder(folder, previous, digest, hashes, folder in fresh)
        began = time.perf_counter()
        try:
            records[stage.name] = run_stage(stage, config, folder, paths, hashes)
        except Exception:
            runs.append(StageRun(stage.name, "failed", time.perf_counter() - began, None))
            raise
        runs.append(StageRun(stage.name, "ran", time.perf_counter() - began, records[stage.name]))
    return runs
