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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rich.progress import Progress

from shared.provenance import config_digest, sha256_tree
from site_agent.config import SiteConfig
from site_agent.pipeline.runner import (
    can_skip,
    prepare_folder,
    resolve_inputs,
    run_stage,
    settings_digest,
    stage_folder,
)
from site_agent.pipeline.stage import Stage, StageRecord, read_record


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


def run_stages(
    config: SiteConfig,
    stages: Sequence[Stage],
    store: StageStore,
    progress: Progress | None = None,
    on_stage: Callable[[StoredStage], None] | None = None,
) -> tuple[dict[str, StageRecord], list[StoredStage]]:
    """Run ``stages`` in order for one run (work dir ``config.work_dir``), through ``store``."""
    folders: dict[str, Path] = {}
    records: dict[str, StageRecord] = {}
    done: list[StoredStage] = []
    for index, stage in enumerate(stages, 1):
        paths, hashes = resolve_inputs(
            stage, folders, records, fix="rerun the experiment; its store lacks {upstream}"
        )
        hashes.update({k: sha256_tree(p) for k, p in stage.sources(config).items()})
        digest = settings_digest(stage, config)
        key = stage_key(stage.name, digest, hashes)
        folder = store.folder(stage.name, key)
        began = time.perf_counter()
        record = store.completed(folder, digest, hashes)
        status: Literal["ran", "reused"] = "reused"
        if record is None:
            prepare_folder(folder, read_record(folder), digest, hashes, fresh=False)
            record = run_stage(stage, config, folder, paths, hashes, progress)
            store.checked.add(folder)
            status = "ran"
        folders[stage.name], records[stage.name] = folder, record
        link(stage_folder(config.work_dir, index, stage), folder)
        outcome = StoredStage(stage.name, status, time.perf_counter() - began, key)
        done.append(outcome)
        if on_stage is not None:
            on_stage(outcome)
    return records, done
