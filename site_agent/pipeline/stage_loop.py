"""The one skip/run loop: call stages in order, reuse what is already done.

Where a stage's folder is and when its last run may be reused is the :class:`Placement`'s
choice. A site pipeline numbers its folders under the work dir and honours ``--from``
(:class:`WorkDirPlacement`); an experiment keeps them in a content-addressed store that runs
share (``studies``' store placement). Either way a stage re-runs when its settings digest or
any input hash changed, or when its artifacts are gone or differ on disk from the hashes its
record names; every stage writes a ``stage.json``, also when it fails, and a stage killed
without one (out of memory) is reported on the next run (``running_marker.py``).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic_core import to_jsonable_python
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from shared.atomic import atomic_write_text
from shared.errors import UsageError
from shared.progress import stage_progress
from shared.provenance import config_digest, sha256_tree, tool_version
from site_agent.pipeline.running_marker import (
    TERMINATED_EXIT,
    PeakMemory,
    killed_marker,
    killed_message,
    running_marker,
    stopped_message,
)
from site_agent.pipeline.stage import (
    STAGE_RECORD,
    C,
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
    """How one stage went in this invocation, and the folder it ran (or was reused) in."""

    name: str
    status: Literal["ran", "skipped", "failed", "stopped"]
    seconds: float
    record: StageRecord | None
    folder: Path | None = None


def stage_folder(work_dir: Path, index: int, stage: Stage[Any]) -> Path:
    return work_dir / f"{index:02d}-{stage.name}"


def settings_digest(stage: Stage[C], config: C) -> str:
    """SHA-256 of the config slice the stage depends on (models nested in dicts included)."""
    return config_digest(to_jsonable_python(stage.settings(config)))


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def resolve_inputs(
    stage: Stage[Any],
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
    stage: Stage[Any],
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
    stage: Stage[C],
    config: C,
    folder: Path,
    inputs: dict[str, Path],
    hashes: dict[str, str],
    progress: Progress | None = None,
    resolved: object = None,
) -> StageRecord:
    """Run one stage and write its ``stage.json`` (also on failure, then re-raise).

    Engines draw their bars on ``progress`` when given (a caller's live display), else on a
    display of the stage's own."""
    folder.mkdir(parents=True, exist_ok=True)
    digest = settings_digest(stage, config)
    started = datetime.now(UTC)
    peak = PeakMemory(0.0)
    try:
        with (
            running_marker(folder, stage.name) as peak,
            contextlib.nullcontext(progress) if progress else stage_progress() as shown,
        ):
            output = stage.run(StageContext(config, folder, inputs, hashes, shown, resolved))
    except Exception as exc:
        failed = _record(stage, folder, digest, hashes, started, None, error=str(exc))
        failed = failed.model_copy(update={"peak_rss_gb": peak.gb or None})
        summary = getattr(exc, "summary", None)  # what a gate measured before it stopped
        if isinstance(summary, dict):
            failed = failed.model_copy(update={"summary": summary})
        _write(folder, failed)
        raise
    record = _record(stage, folder, digest, hashes, started, output)
    record = record.model_copy(update={"peak_rss_gb": peak.gb})
    _write(folder, record)
    return record


def prepare_folder(
    folder: Path,
    previous: StageRecord | None,
    digest: str,
    inputs: dict[str, str],
    fresh: bool,
    keeps: Sequence[str] = (),
) -> None:
    """Empty the stage folder when its content is stale; keep it when a run can resume.

    Stale: a forced restart, or a record for other settings or inputs. A folder without a
    record, or with a failed record for the same settings and inputs, is kept so that a
    resumable stage (generation) continues where it stopped. The files named in ``keeps``
    (``Stage.keeps``: stores that check their own key) stay when only the settings changed:
    not on a forced restart, nor when an input changed.
    """
    same_inputs = previous is not None and previous.input_hashes == inputs
    same = same_inputs and previous is not None and previous.config_digest == digest
    if not folder.exists() or not (fresh or (previous is not None and not same)):
        return
    if not keeps or fresh or not same_inputs:
        shutil.rmtree(folder)
        return
    for child in folder.iterdir():
        if child.name in keeps:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


class Placement(Protocol):
    """Where each stage's folder is, and whether its last run there may be reused."""

    missing_input_fix: str

    def folder(self, index: int, stage: Stage[Any], digest: str, inputs: dict[str, str]) -> Path:
        """The folder stage number ``index`` (from 1) runs in for these settings and inputs."""
        ...

    def reusable(
        self, index: int, folder: Path, digest: str, inputs: dict[str, str]
    ) -> StageRecord | None:
        """The record to reuse instead of running; None when the stage must run."""
        ...

    def fresh(self, folder: Path) -> bool:
        """True when the folder must be emptied before the stage runs (a forced restart)."""
        ...

    def placed(self, index: int, stage: Stage[Any], folder: Path) -> None:
        """Called once the stage's folder holds a completed run (ran or reused)."""
        ...


@dataclass
class WorkDirPlacement:
    """A site pipeline's folders, ``<work_dir>/<NN-name>/``; ``from_index`` and later stages
    run again whatever their records say (``--from``)."""

    work_dir: Path
    stages: Sequence[Stage[Any]]
    from_index: int | None = None
    missing_input_fix: str = "re-run with --from {upstream}"
    _restarted: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        first = len(self.stages) if self.from_index is None else self.from_index
        self._restarted = {
            stage_folder(self.work_dir, i, s) for i, s in enumerate(self.stages, 1) if i > first
        }
        for folder in self._restarted:  # forget them before any stage runs
            (folder / STAGE_RECORD).unlink(missing_ok=True)

    def folder(self, index: int, stage: Stage[Any], digest: str, inputs: dict[str, str]) -> Path:
        return stage_folder(self.work_dir, index, stage)

    def reusable(
        self, index: int, folder: Path, digest: str, inputs: dict[str, str]
    ) -> StageRecord | None:
        if folder in self._restarted:
            return None
        previous = read_record(folder)
        return previous if can_skip(previous, digest, inputs, folder) else None

    def fresh(self, folder: Path) -> bool:
        return folder in self._restarted

    def placed(self, index: int, stage: Stage[Any], folder: Path) -> None:
        return None


def run_stages(
    config: C,
    stages: Sequence[Stage[C]],
    placement: Placement,
    *,
    progress: Progress | None = None,
    console: Console | None = None,
    on_stage: Callable[[StageRun], None] | None = None,
    runs: list[StageRun] | None = None,
    resolved: object = None,
) -> list[StageRun]:
    """Run ``stages`` in order through ``placement``; returns (and appends to ``runs``) what
    ran and what was reused. A failing stage is recorded and its exception re-raised.
    ``resolved``: what the caller resolved once for the run, handed to every stage."""
    folders: dict[str, Path] = {}
    records: dict[str, StageRecord] = {}
    runs = [] if runs is None else runs
    for index, stage in enumerate(stages, 1):
        paths, hashes = resolve_inputs(stage, folders, records, placement.missing_input_fix)
        hashes.update({k: sha256_tree(p) for k, p in stage.sources(config).items()})
        digest = settings_digest(stage, config)
        folder = placement.folder(index, stage, digest, hashes)
        began = time.perf_counter()
        record = placement.reusable(index, folder, digest, hashes)
        if record is not None:
            if console is not None:
                console.print(f"[dim]= {stage.name}: unchanged, skipped[/]")
            run = StageRun(stage.name, "skipped", time.perf_counter() - began, record, folder)
        else:
            killed = killed_marker(folder)
            if killed is not None:
                report_ended(killed_message(killed, stage.memory_fix), console)
            if console is not None:
                console.rule(f"[bold]{index:02d} {stage.name}[/] {stage.description}")
            prepare_folder(
                folder, read_record(folder), digest, hashes, placement.fresh(folder), stage.keeps
            )
            try:
                record = run_stage(stage, config, folder, paths, hashes, progress, resolved)
            except Exception:
                runs.append(StageRun(stage.name, "failed", time.perf_counter() - began, None))
                raise
            except (KeyboardInterrupt, SystemExit) as stop:
                seconds = time.perf_counter() - began
                runs.append(StageRun(stage.name, "stopped", seconds, None))
                how = "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "SIGTERM"
                if isinstance(stop, KeyboardInterrupt) or stop.code == TERMINATED_EXIT:
                    report_ended(stopped_message(stage.name, seconds, how), console)
                raise
            run = StageRun(stage.name, "ran", time.perf_counter() - began, record, folder)
        folders[stage.name], records[stage.name] = folder, record
        placement.placed(index, stage, folder)
        runs.append(run)
        if on_stage is not None:
            on_stage(run)
    return runs


def report_ended(message: str, console: Console | None) -> None:
    """Say on the console (or stderr) that a stage ended without a record: the last run's
    was killed, or this run's was stopped."""
    if console is not None:
        console.print(f"[bold yellow]{escape(message)}[/]", highlight=False, soft_wrap=True)
    else:
        print(message, file=sys.stderr)


def check_from(stages: Sequence[Stage[Any]], from_stage: str | None) -> int | None:
    """The position (from 0) of ``from_stage``; a UsageError naming the stages if unknown."""
    names = [s.name for s in stages]
    if from_stage is None:
        return None
    if from_stage not in names:
        raise UsageError(f"unknown stage {from_stage!r} for --from; fix: use one of {names}")
    return names.index(from_stage)
