"""``registry.json``: what was fetched, from which wheels, under which licence, with file hashes.

The site's model registry (``site_agent.models``) writes it into every model folder it installs;
:mod:`shared.model_identity` reads it on both sides to name a model folder.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field, ValidationError

from protocol.base import ProtocolModel
from shared.atomic import atomic_write_text
from shared.errors import ModelUnavailableError
from shared.provenance import sha256_file

RECORD_NAME = "registry.json"


class SourceWheel(ProtocolModel):
    filename: str
    sha256: str


class ModelRecord(ProtocolModel):
    """The provenance of one installed model folder."""

    name: str
    role: str
    licence: str
    licence_notice: str = ""
    packages: tuple[str, ...]
    source_wheels: tuple[SourceWheel, ...]
    converter: str
    conversion_notes: dict[str, str] = Field(default_factory=dict)
    files: dict[str, str]
    size_bytes: int
    tool_version: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    seconds: dict[str, float] = Field(default_factory=dict)


def hash_files(folder: Path) -> dict[str, str]:
    """SHA-256 of every file below ``folder`` (relative POSIX names), the record excluded."""
    return {
        p.relative_to(folder).as_posix(): sha256_file(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != RECORD_NAME
    }


def write_record(folder: Path, record: ModelRecord) -> None:
    atomic_write_text(folder / RECORD_NAME, record.model_dump_json(indent=2) + "\n")


def read_record(folder: Path) -> ModelRecord | None:
    """The record of an installed model, or ``None`` when the folder holds none."""
    path = folder / RECORD_NAME
    if not path.is_file():
        return None
    try:
        return ModelRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise ModelUnavailableError(
            f"{path}: unreadable model record ({exc}); fix: re-fetch with --force"
        ) from exc


def verify_files(folder: Path, record: ModelRecord) -> list[str]:
    """Problems found re-hashing the folder against its record (empty when intact)."""
    actual = hash_files(folder)
    problems = [f"{folder / n}: missing" for n in record.files if n not in actual]
    problems += [
        f"{folder / n}: SHA-256 {actual[n][:12]}… differs from the recorded {h[:12]}…"
        for n, h in record.files.items()
        if n in actual and actual[n] != h
    ]
    problems += [f"{folder / n}: not in the record" for n in actual if n not in record.files]
    return problems
