"""The table of known models; built-in entries and plug-ins add themselves with ``register_model``.

Plug-in modules (the built-in catalogue, the e5 conversion) are imported lazily the first time
the table is read, so adding a model is adding a module that calls :func:`register_model`.
"""

from __future__ import annotations

from shared.errors import ModelUnavailableError
from shared.registry import Registry
from site_agent.models.spec import ModelSpec


def _plugins() -> None:
    """The built-in catalogue and the e5 conversion; each registers its models on import."""
    from site_agent.models import catalog, e5_convert  # noqa: F401


SPECS: Registry[ModelSpec] = Registry(
    "model",
    builtins=_plugins,
    error=ModelUnavailableError,
    fix="use one of them, a local model folder, or a Hugging Face id 'org/name'",
)


def register_model(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` to the registry; a second spec with the same name needs ``replace=True``."""
    return SPECS.add(spec.name, spec, replace=replace)


def registered_models() -> dict[str, ModelSpec]:
    """Every registered spec by name (built-ins and plug-ins included)."""
    return dict(sorted(SPECS.entries().items()))


def get_spec(name: str) -> ModelSpec:
    return SPECS.get(name)
