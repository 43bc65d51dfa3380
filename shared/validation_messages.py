"""Turn pydantic validation errors into lines that name the field: ``loc -> message`` for
data files and messages, ``source: [loc] message; fix`` for configuration files."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ValidationError

_CONFIG_FIXES = {
    "extra_forbidden": "unknown field; fix: remove it or check its spelling against the docs",
    "missing": "required field is missing; fix: add it",
}


def _problems(error: ValidationError, fixes: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``(loc, message)`` per problem; rules that report several problems at once are split."""
    for item in error.errors():
        loc = " -> ".join(str(part) for part in item["loc"])
        message = fixes.get(item["type"]) or str(item["msg"]).removeprefix("Value error, ")
        for part in message.split("\n"):
            yield loc, part


def validation_lines(error: ValidationError) -> list[str]:
    """One ``loc -> message`` line per problem."""
    return [f"{loc} -> {msg}" if loc else msg for loc, msg in _problems(error, {})]


def config_lines(error: ValidationError, source: str) -> list[str]:
    """One ``source: [loc] message`` line per problem of a configuration file, with the fix
    for unknown and missing fields."""
    return [
        f"{source}: [{loc or '(top level)'}] {msg}" for loc, msg in _problems(error, _CONFIG_FIXES)
    ]
