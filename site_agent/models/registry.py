"""The table of known models; built-in entries and plug-ins add themselves with ``register_model``.

Plug-in modules (the built-in catalogue, the e5 conversion) are imported lazily the first time
the table is read, so adding a model is adding a module that calls :func:`register_model`.
"""

from __future__ import annotations

import importlib

from shared.errors import ModelUnavailableError
from site_agent.models.spec import ModelSpec

_SPECS: dict[str, ModelSpec] = {}
_PLUGIN_MODULES = ("site_agent.models.catalog", "site_agent.models.e5_convert")
_loaded = False


def register_model(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` to the registry; a second spec with the same name needs ``replace=True``."""
    existing = _SPECS.get(spec.name)
    if existing is not None and existing != spec and not replace:
        raise ValueError(
            f"model {spec.name!r} is already registered with different settings; "
            "fix: pick another name or pass replace=True"
        )
    _SPECS[spec.name] = spec
    return spec


def _load_plugins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _PLUGIN_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def registered_models() -> dict[str, ModelSpec]:
    """Every registered spec by name (built-ins and plug-ins included)."""
    _load_plugins()
    return dict(sorted(_SPECS.items()))


def get_spec(name: str) -> ModelSpec:
    known = registered_models()
    if name not in known:
        raise ModelUnavailableError(
            f"unknown model {name!r}; registered models: {sorted(known)}; "
            "fix: use one of them, a local model folder, or a Hugging Face id 'org/name'"
        )
    return known[name]
