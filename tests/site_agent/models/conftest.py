"""Local wheels and tiny models so that fetch runs end to end without the network."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from site_agent.models import ModelSpec, register_model, registry
from tests.tiny_models import tiny_causal_lm


def build_wheel(wheelhouse: Path, dist: str, version: str, files: dict[str, Path | str]) -> Path:
    """A minimal valid wheel holding ``files`` (archive name -> local file or text)."""
    module = dist.replace("-", "_")
    wheel = wheelhouse / f"{module}-{version}-py3-none-any.whl"
    info = f"{module}-{version}.dist-info"
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, content in files.items():
            if isinstance(content, Path):
                archive.write(content, name)
            else:
                archive.writestr(name, content)
        archive.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        )
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        )
        archive.writestr(f"{info}/LICENSE", "Apache License 2.0 (test)\n")
        archive.writestr(f"{info}/RECORD", "")
    return wheel


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "llama", ["paciente ingresa"])


@pytest.fixture(scope="session")
def tiny_wheelhouse(tmp_path_factory: pytest.TempPathFactory, tiny_llama: Path) -> Path:
    """A wheel shipping the tiny Llama as a transformers folder under ``tiny_pkg/model``."""
    house = tmp_path_factory.mktemp("wheels")
    files: dict[str, Path | str] = {
        f"tiny_pkg/model/{p.name}": p for p in tiny_llama.iterdir() if p.is_file()
    }
    files["tiny_pkg/__init__.py"] = ""
    build_wheel(house, "tiny-pkg", "0.0.1", files)
    return house


def register_tiny_llama(convert: str = "copy-folder", **options: object) -> str:
    """Register ``tiny-llama``: the tiny wheel's model folder, converted with ``convert``."""
    register_model(
        ModelSpec(
            "tiny-llama",
            "generator",
            ("tiny-pkg==0.0.1",),
            convert,
            "Apache-2.0",
            convert_options={"subpath": "tiny_pkg/model", **options},
            licence_files=("*.dist-info/LICENSE",),
        ),
        replace=True,
    )
    return "tiny-llama"


def copy_from(wheelhouse: Path) -> Callable[[Sequence[str], Path], list[Path]]:
    """A downloader that takes pinned wheels from a local folder (fast; pip is tested apart)."""

    def download(pins: Sequence[str], dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        found = []
        for pin in pins:
            name, version = pin.split("==")
            wheel = wheelhouse / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
            found.append(Path(shutil.copy2(wheel, dest)))
        return found

    return download


@pytest.fixture(autouse=True)
def isolated_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test sees the built-in table plus what it registers, and its own cache."""
    monkeypatch.setenv("DEID_SYNTH_CACHE", str(tmp_path / "cache"))
    with registry.SPECS.scoped():
        yield
