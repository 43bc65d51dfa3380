"""Writes that cannot leave their root folder.

Whatever part of a path comes from a site (an artifact name, a site id in a folder name) goes
through :func:`contained_path`, and every file the coordinator writes on a site's behalf
through :func:`write_contained`: the name must be a safe relative POSIX path (the rules of
``protocol.export.check_artifact_name``), the resolved target must lie inside the resolved
root, and no folder on the way may be a symbolic link.
"""

from __future__ import annotations

from pathlib import Path

from protocol.export import UnsafeArtifactName, check_artifact_name
from shared.atomic import atomic_write_bytes
from shared.errors import VerificationError


class PathEscapeError(VerificationError):
    """A write would land outside its root folder."""


def contained_path(root: Path, name: str) -> Path:
    """``root / name`` when that stays inside ``root``; raises PathEscapeError otherwise."""
    try:
        check_artifact_name(name)
    except UnsafeArtifactName as exc:
        raise PathEscapeError(f"refused to write below {root}: {exc}") from exc
    base = root.resolve()
    target = base.joinpath(*name.split("/"))
    probe = base
    for part in name.split("/"):
        probe = probe / part
        if probe.is_symlink():
            raise PathEscapeError(f"refused to write {name!r} below {root}: {probe} is a link")
    if not target.resolve().is_relative_to(base):
        raise PathEscapeError(f"refused to write {name!r}: it resolves outside {root}")
    return target


def write_contained(root: Path, name: str, data: bytes) -> Path:
    """Write ``data`` atomically to ``root / name`` once :func:`contained_path` allows it."""
    target = contained_path(root, name)
    atomic_write_bytes(target, data)
    return target
