"""Generation modes, a registry (``[generation] mode``): one mode per file.

``annotate`` (seed 000), ``tagged`` (seed 003) and ``template`` (seed 002) all produce the
same protocol ``Corpus``, which flows through the same annotate stage and privacy audit.
"""

from __future__ import annotations

from shared.registry import Registry
from site_agent.generate.modes.base import GenerationMode, Labelled, SeedNotes, SpanSource
from site_agent.generate.settings import GENERATION_MODES, PLUGIN_MODES


def _builtin_modes() -> None:
    """The built-in modes, one file each in this folder; each registers itself when imported.
    Plain imports, so the import graph sees them; a test keeps them equal to the folder's
    files (``GENERATION_MODES``), which validation reads without importing a mode."""
    from site_agent.generate.modes import annotate, tagged, template  # noqa: F401


MODES: Registry[GenerationMode] = Registry("generation mode", builtins=_builtin_modes)


def register_mode(mode: GenerationMode) -> GenerationMode:
    """Add ``mode`` to the registry under its name."""
    if mode.name in MODES:
        raise ValueError(f"generation mode {mode.name!r} is registered twice")
    if mode.name not in GENERATION_MODES:
        PLUGIN_MODES.add(mode.name)  # a plug-in mode: site.toml may name it
    return MODES.add(mode.name, mode)


def mode_names() -> list[str]:
    return MODES.names()


def mode_for(name: str) -> GenerationMode:
    """The registered mode ``name``; ConfigError naming ``[generation] mode`` otherwise."""
    return MODES.get(name, setting="site config [generation] mode")


__all__ = [
    "MODES",
    "GenerationMode",
    "Labelled",
    "SeedNotes",
    "SpanSource",
    "mode_for",
    "mode_names",
    "register_mode",
]
