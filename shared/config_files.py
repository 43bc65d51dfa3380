"""Reading our TOML config files the same way everywhere: one reader, one path resolver.

``coordinator.toml``, the ``[federation]`` table of site.toml and label mappings all go
through :func:`read_toml` (errors name the file and line) and :func:`resolve_paths` (relative
paths are taken from the file's folder and made absolute, because Flower processes and the
ServerApp may run from another folder). Validation errors are turned into lines by
``shared.validation_messages.validation_lines``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from shared.errors import ConfigError
from shared.text_files import read_text

_TOML_WHERE = re.compile(r"\(at line (\d+), column \d+\)")


def read_toml(path: Path, *, what: str, fix: str = "fix the syntax") -> dict[str, Any]:
    """The tables of a TOML file, or a ConfigError naming the file, the line and ``fix``."""
    text = read_text(path, what=what, error=ConfigError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_WHERE.search(str(exc))
        where = f"{path}:{found[1]}" if found else str(path)
        raise ConfigError(f"{where}: not valid TOML ({exc}); {fix}") from exc


def resolve_paths(values: Mapping[str, Any], keys: Iterable[str], base: Path) -> dict[str, Any]:
    """``values`` with every set path under ``keys`` made absolute against ``base``."""
    root = base.resolve()
    resolved = dict(values)
    for key in keys:
        if resolved.get(key):
            resolved[key] = str(root / str(resolved[key]))
    return resolved
