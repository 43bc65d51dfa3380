"""Converters turn unpacked wheels into a model folder that ``from_pretrained`` can load.

Each converter lives in its own module and registers itself under a name that model specs
refer to (``ModelSpec.convert``); new ones (e.g. the e5 conversion) call
:func:`register_converter` the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.errors import ModelUnavailableError
from shared.registry import Registry


@dataclass(frozen=True)
class ConversionRequest:
    """The unpacked wheels (one folder per package, spec order) and where the model goes.

    ``scratch`` is a temporary folder for intermediate files that must not end up in the model.
    """

    model: str
    sources: tuple[Path, ...]
    out_dir: Path
    scratch: Path
    options: Mapping[str, Any] = field(default_factory=dict)

    def find(self, pattern: str) -> list[Path]:
        """Files matching ``pattern`` (a glob relative to a wheel root) across all wheels."""
        return sorted(p for src in self.sources for p in src.glob(pattern) if p.is_file())

    def find_one(self, pattern: str) -> Path:
        found = self.find(pattern)
        if len(found) != 1:
            raise ModelUnavailableError(
                f"model {self.model!r}: expected exactly one file matching {pattern!r} in the "
                f"downloaded wheels, found {len(found)} ({[p.name for p in found]}); fix: check "
                "the package pins and the 'convert_options' of the model spec"
            )
        return found[0]


Converter = Callable[[ConversionRequest], Mapping[str, str]]
"""Writes the model into ``request.out_dir``; returns notes recorded in ``registry.json``."""


def _builtin_converters() -> None:
    from site_agent.models.converters import copy_folder, gguf_to_safetensors  # noqa: F401


CONVERTERS: Registry[Converter] = Registry(
    "model converter",
    builtins=_builtin_converters,
    error=ModelUnavailableError,
    fix="register it with register_converter() before fetching",
)


def register_converter(name: str, converter: Converter) -> Converter:
    return CONVERTERS.add(name, converter, replace=True)


def converters() -> dict[str, Converter]:
    return CONVERTERS.entries()


def get_converter(name: str) -> Converter:
    return CONVERTERS.get(name)
