"""Converters turn unpacked wheels into a model folder that ``from_pretrained`` can load.

Each converter lives in its own module and registers itself under a name that model specs
refer to (``ModelSpec.convert``); new ones (e.g. the e5 conversion) call
:func:`register_converter` the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.errors import ModelUnavailableError


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

_CONVERTERS: dict[str, Converter] = {}
_BUILTIN_MODULES = ("copy_folder", "gguf_to_safetensors")


def register_converter(name: str, converter: Converter) -> Converter:
    _CONVERTERS[name] = converter
    return converter


def converters() -> dict[str, Converter]:
    for module in _BUILTIN_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return dict(_CONVERTERS)


def get_converter(name: str) -> Converter:
    known = converters()
    if name not in known:
        raise ModelUnavailableError(
            f"unknown model converter {name!r}; registered converters: {sorted(known)}; "
            "fix: register it with register_converter() before fetching"
        )
    return known[name]
