"""What a pipeline stage is: a named adapter onto a plain function, the config slice it depends
on, its inputs; and ``stage.json``, the record that says where its artifacts are.

The machinery is generic: it imports no stage and no site config. The ordered stage list and
the adapters that read the site config are the composition root, :mod:`site_agent.stages`.

A stage reads upstream artifacts by key (``"split.train"``), writes its own artifacts into
its folder ``<work_dir>/<NN-name>/`` and returns them by name. ``stage.json`` records status,
the digest of the stage's settings, the hashes of its inputs and outputs, package versions
and timings, so that a re-run can skip a stage whose settings and inputs are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field
from rich.progress import Progress

from protocol.base import ProtocolModel
from shared.records import read_record_file

C = TypeVar("C")
"""The configuration type the stages read (the site agent's ``SiteConfig``)."""

STAGE_RECORD = "stage.json"


@dataclass(frozen=True)
class StageContext(Generic[C]):
    """Everything a stage adapter may use: config, folder, inputs and their hashes, progress."""

    config: C
    stage_dir: Path
    inputs: Mapping[str, Path]
    input_hashes: Mapping[str, str] = field(default_factory=dict)
    progress: Progress | None = None
    resolved: object = None
    """What the composition root resolved once per run for its stages (opaque here; the
    site's is ``site_agent.stages.knobs.SharedKnobs``)."""


@dataclass(frozen=True)
class StageOutput:
    """Artifacts a stage produced (name -> path inside its folder) and a short summary."""

    artifacts: dict[str, Path]
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stage(Generic[C]):
    """One registered stage.

    ``settings`` picks the part of the site config the stage depends on (its digest decides
    whether a re-run may skip it); ``inputs`` names upstream artifacts (``"stage.artifact"``);
    ``sources`` names files from outside the work dir (the gold corpus) that are hashed
    directly; ``memory_fix`` is the advice shown when the stage was killed (out of memory).
    """

    name: str
    run: Callable[[StageContext[C]], StageOutput]
    settings: Callable[[C], Any]
    inputs: tuple[str, ...] = ()
    sources: Callable[[C], dict[str, Path]] = lambda _config: {}
    description: str = ""
    memory_fix: str = "free memory for it, or lower its batch size"
    """What to change when the kernel killed this stage (shown on the next run)."""
    keeps: tuple[str, ...] = ()
    """Files of the stage folder kept when it is emptied because its settings changed (not
    on ``--from``, nor when an input changed): stores that check their own key (the
    generator's partial store holds the digest of what it generated and starts over when
    that differs), so a re-run for a setting they do not depend on (the filler's, the
    audit's) does not throw away hours of work."""


class StageRecord(ProtocolModel):
    """``stage.json``: what ran, from what, with which settings, when and how long."""

    stage: str
    status: Literal["completed", "failed"]
    config_digest: str
    input_hashes: dict[str, str]
    artifacts: dict[str, str] = Field(default_factory=dict)
    artifact_hashes: dict[str, str] = Field(default_factory=dict)
    summary: dict[str, Any] = Field(default_factory=dict)
    package_versions: dict[str, str] = Field(default_factory=dict)
    tool_version: str
    started_at: datetime
    finished_at: datetime
    seconds: float
    peak_rss_gb: float | None = Field(
        None, description="peak resident memory of the process (and children) while it ran"
    )
    error: str | None = None


def read_record(folder: Path) -> StageRecord | None:
    """The ``stage.json`` in ``folder``; None when there is none or it does not parse."""
    return read_record_file(StageRecord, folder / STAGE_RECORD)


def artifact_path(folder: Path, stored: str) -> Path:
    """Where an artifact named in a record of ``folder`` is (records store relative paths)."""
    path = Path(stored)
    return path if path.is_absolute() else folder / path
