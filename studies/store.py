"""The content-addressed stage store: a stage that two runs share is computed once.

A stage's outcome is fixed by its name, the digest of its settings and the hashes of its
inputs; that triple names its folder, ``<store>/<stage>/<key>/``, which holds the usual
``stage.json`` and artifacts. Each run's work dir links ``<NN-stage>`` to the store folder, so
it reads like a site pipeline's. A run finds a completed folder for its key and reuses it
(after checking its artifacts on disk against their recorded hashes, once per process);
otherwise the stage runs there, resuming what a failed attempt left (generation does).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.progress import Progress

from shared.provenance import config_digest
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageRecord, read_record
from site_agent.pipeline.stage_loop import StageRun, can_skip, run_stages, stage_folder
from site_agent.stages.knobs import resolve_knobs
from site_agent.stages.pipeline import write_run_plan


@dataclass(frozen=True)
class StoredStage:
    """How one stage of one run went: computed now, or reused from the store."""

    name: str
    status: Literal["ran", "reused"]
    seconds: float
    key: str


def stage_key(name: str, digest: str, inputs: dict[str, str]) -> str:
    """The store key of a stage: its name, settings digest and input hashes."""
    return config_digest({"stage": name, "settings": digest, "inputs": inputs})[:24]


@dataclass
class StageStore:
    """``root/<stage>/<key>/`` folders, and the ones already checked by this process."""

    root: Path
    checked: set[Path] = field(default_factory=set)

    def folder(self, name: str, key: str) -> Path:
        return self.root / name / key

    def completed(self, folder: Path, digest: str, inputs: dict[str, str]) -> StageRecord | None:
        """The record of a reusable folder (completed, same settings and inputs, artifacts
        intact on disk); None when the stage must run."""
        record = read_record(folder)
        if record is None or record.status != "completed":
            return None
        if folder in self.checked:
            same = record.config_digest == digest and record.input_hashes == inputs
            return record if same else None
        if not can_skip(record, digest, inputs, folder):
            return None
        self.checked.add(folder)
        return record


def link(run_folder: Path, target: Path) -> None:
    """Point the run's ``<NN-stage>`` at the store folder (relative, so the tree can move)."""
    run_folder.parent.mkdir(parents=True, exist_ok=True)
    if run_folder.is_symlink() or run_folder.exists():
        if run_folder.is_symlink() and run_folder.resolve() == target.resolve():
            return
        run_folder.unlink()
    run_folder.symlink_to(os.path.relpath(target, run_folder.parent), target_is_directory=True)


@dataclass
class StorePlacement:
    """The pipeline loop's placement for one run: stage folders in the shared store, keyed by
    settings and inputs, linked from the run's work dir as ``<NN-stage>``."""

    store: StageStore
    work_dir: Path
    missing_input_fix: str = "rerun the experiment; its store lacks {upstream}"
    keys: dict[str, str] = field(default_factory=dict)

    def folder(self, index: int, stage: Stage[Any], digest: str, inputs: dict[str, str]) -> Path:
        self.keys[stage.name] = stage_key(stage.name, digest, inputs)
        return self.store.folder(stage.name, self.keys[stage.name])

    def reusable(
        self, index: int, folder: Path, digest: str, inputs: dict[str, str]
    ) -> StageRecord | None:
        return self.store.completed(folder, digest, inputs)

    def fresh(self, folder: Path) -> bool:
        return False

    def placed(self, index: int, stage: Stage[Any], folder: Path) -> None:
        self.store.checked.add(folder)
        link(stage_folder(self.work_dir, index, stage), folder)


def run_stages_in_store(
    config: SiteConfig,
    stages: Sequence[Stage[SiteConfig]],
    store: StageStore,
    progress: Progress | None = None,
    on_stage: Callable[[StoredStage], None] | None = None,
) -> tuple[dict[str, StageRecord], list[StoredStage]]:
    """Run ``stages`` in order for one run (work dir ``config.work_dir``), through ``store``,
    with the site pipeline's own skip/run loop, after writing the run's plan (``run-plan.json``
    in the run's work dir) once, as a site pipeline does, with the knobs it resolves once."""
    knobs = resolve_knobs(config)
    write_run_plan(config, stages, knobs=knobs)
    placement = StorePlacement(store, config.work_dir)
    done: list[StoredStage] = []

    def stored(run: StageRun) -> None:
        status: Literal["ran", "reused"] = "ran" if run.status == "ran" else "reused"
        outcome = StoredStage(run.name, status, run.seconds, placement.keys[run.name])
        done.append(outcome)
        if on_stage is not None:
            on_stage(outcome)

    runs = run_stages(config, stages, placement, progress=progress, on_stage=stored, resolved=knobs)
    records = {run.name: run.record for run in runs if run.record is not None}
    return records, done
