"""Model folders loaded without running anyone's code.

A model folder may come from the coordinator (every cross-site model), from another site (an
exported encoder forwarded to all) or from an operator. Transformers runs Python shipped in a
folder when its ``config.json`` or ``tokenizer_config.json`` names it in ``auto_map`` and
``trust_remote_code`` is set (or answered yes at a prompt). Every load in ``ner/`` and on the
coordinator goes through :func:`from_pretrained`: it refuses a folder that holds code files,
an ``auto_map`` or a model type this transformers does not know, and passes
``trust_remote_code=False`` so that nothing is ever asked or run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shared.errors import ModelUnavailableError
from shared.limits import JsonLimits, LimitExceeded, parse_json

CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".so", ".pyd", ".pth", ".bin", ".pkl", ".pickle", ".pt")
CONFIG_FILES = ("config.json", "tokenizer_config.json", "preprocessor_config.json")
CONFIG_LIMITS = JsonLimits(max_bytes=4 * 1024 * 1024, max_depth=16, max_members=200_000)


class UnsafeModel(ModelUnavailableError):
    """A model folder that could run code or load pickles when transformers reads it."""


def known_model_types() -> frozenset[str]:
    """The ``model_type`` values this transformers builds from its own code."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return frozenset(CONFIG_MAPPING_NAMES)


def config_problem(name: str, config: object) -> str | None:
    """Why a parsed ``config.json`` / ``tokenizer_config.json`` is unsafe, or None."""
    if not isinstance(config, Mapping):
        return f"{name} is not a JSON object"
    if "auto_map" in config:
        return f"{name} names code to run (auto_map)"
    model_type = config.get("model_type")  # absent: transformers has nothing to run either
    if name == "config.json" and model_type is not None and model_type not in known_model_types():
        return f"{name}: model_type {str(model_type)[:40]!r} is unknown"
    return None


def folder_problem(folder: Path) -> str | None:
    """Why loading ``folder`` could run code, or None when it holds configs and weights only."""
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            return f"{path.relative_to(folder)} is a link"
        if path.is_file() and path.name.lower().endswith(CODE_SUFFIXES):
            return f"{path.relative_to(folder)} is code or a pickle"
    for name in CONFIG_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            config = parse_json(path.read_bytes(), CONFIG_LIMITS, str(path))
        except (LimitExceeded, ValueError) as exc:
            return f"{name} does not parse within the caps: {exc}"
        problem = config_problem(name, config)
        if problem:
            return problem
    return None


def check_model_source(source: Path | str) -> Path | str:
    """``source`` once it is safe to load: a local folder is checked; a Hugging Face id loads
    from the local cache with remote code refused by transformers itself."""
    folder = Path(source).expanduser()
    if folder.is_dir():
        problem = folder_problem(folder)
        if problem:
            raise UnsafeModel(
                f"{folder}: refused to load: {problem}; allowed: safetensors weights, JSON "
                "configs of a model type transformers knows, tokenizer files; fix: re-save the "
                "model with save_pretrained from a known architecture"
            )
    return source


def from_pretrained(loader: Any, source: Path | str, **kwargs: Any) -> Any:
    """``loader.from_pretrained(source, ...)`` for a checked source, never trusting remote
    code (``loader`` is an Auto* class or a model/tokenizer class of transformers)."""
    kwargs["trust_remote_code"] = False
    return loader.from_pretrained(check_model_source(source), **kwargs)
