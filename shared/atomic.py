"""Atomic writes: a reader sees either the old file or the complete new one, never half."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding, newline="" if encoding else None) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(target)  # a full disk names the file it could not write
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as handle:
        handle.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a directory under a temporary name; swap it into place only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _identity(path: Path) -> tuple[int, int] | None:
    """What tells this file from a rewrite of it: inode and modification time; None if absent."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns


@contextlib.contextmanager
def written_together(*paths: str | os.PathLike[str]) -> Iterator[None]:
    """Files that are only meaningful together (an audited corpus and its ``audit.json``).

    Each is written atomically on its own; when the block fails after it wrote or replaced any
    of them, all of them are removed, so a reader never finds a new one beside an old or a
    missing one. A block that fails before writing any leaves the previous set as it was.
    """
    targets = [Path(p) for p in paths]
    before = [_identity(p) for p in targets]
    try:
        yield
    except BaseException:
        if [_identity(p) for p in targets] != before:
            for target in targets:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target)
        raise
