"""Generation modes, a registry (``[generation] mode``): one mode per file.

``annotate`` (seed 000), ``tagged`` (seed 003) and ``template`` (seed 002) all produce the
same protocol ``Corpus``, which flows through the same annotate stage and privacy audit.
"""

from __future__ import annotations

from shared.errors import ConfigError
from site_agent.generate.modes.base import GenerationMode, Labelled, SeedNotes, SpanSource

_MODES: dict[str, GenerationMode] = {}


def register_mode(mode: GenerationMode) -> GenerationMode:
    """Add ``mode`` to the registry under its name."""
    if mode.name in _MODES:
        raise ValueError(f"generation mode {mode.name!r} is registered twice")
    _MODES[mode.name] = mode
    return mode


def _ensure_modes() -> None:
    """Import the built-in modes (each registers itself; a no-op once imported)."""
    from site_agent.generate.modes import annotate, tagged, template  # noqa: F401


def mode_names() -> list[str]:
    _ensure_modes()
    return sorted(_MODES)


def mode_for(name: str) -> GenerationMode:
    """The registered mode ``name``; ConfigError naming ``[generation] mode`` otherwise."""
    _ensure_modes()
    try:
        return _MODES[name]
    except KeyError:
        raise ConfigError(
            f"site config [generation] mode = {name!r} is not a generation mode; allowed: "
            f"{sorted(_MODES)}; fix: use one of them"
        ) from None


__all__ = [
    "GenerationMode",
    "Labelled",
    "SeedNotes",
    "SpanSource",
    "mode_for",
    "mode_names",
    "register_mode",
]
