"""Model registry: which generator/encoder models exist, how to fetch them, where they live.

``resolve_model`` is what the pipeline calls; ``register_model`` and ``register_converter``
are how a new model (and its conversion) joins the table.
"""

from site_agent.models.cache import CACHE_ENV, cache_root, model_dir
from site_agent.models.converters import ConversionRequest, register_converter
from site_agent.models.fetch import fetch_model
from site_agent.models.registry import get_spec, register_model, registered_models
from site_agent.models.resolve import resolve_model
from site_agent.models.spec import ModelSpec

__all__ = [
    "CACHE_ENV",
    "ConversionRequest",
    "ModelSpec",
    "cache_root",
    "fetch_model",
    "get_spec",
    "model_dir",
    "register_converter",
    "register_model",
    "registered_models",
    "resolve_model",
]
