"""Check every model a site config names before the first stage runs (nothing is fetched).

A typo in ``[adapt] base_model`` used to surface only when the adapt stage started, after the
annotator had trained. :func:`check_model_references` resolves each name the way the stages
will, offline: an existing local path, a registered name (fetched by the stage if missing),
or a Hugging Face id already in the local Hugging Face cache.
"""

from __future__ import annotations

from pathlib import Path

from shared.errors import ModelUnavailableError
from site_agent.config import SiteConfig
from site_agent.models.registry import registered_models
from site_agent.models.resolve import _HF_ID, _looks_like_path

MODEL_KEYS = (("annotator", "base_model"), ("adapt", "base_model"))


def model_references(config: SiteConfig) -> dict[str, str]:
    """``"[section] key"`` -> the model name or path the site config gives there."""
    return {
        f"[{section}] {key}": str(getattr(getattr(config, section), key))
        for section, key in MODEL_KEYS
    }


def hf_cache_folder(repo_id: str) -> Path:
    """Where ``huggingface_hub`` keeps ``repo_id`` (``models--org--name``) in the local cache."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}"


def in_hf_cache(repo_id: str) -> bool:
    snapshots = hf_cache_folder(repo_id) / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def unresolvable(name_or_path: str) -> str | None:
    """Why ``name_or_path`` cannot be resolved offline, or None when it can."""
    if Path(name_or_path).expanduser().exists() or name_or_path in registered_models():
        return None
    if _looks_like_path(name_or_path):
        return "no such local model folder"
    if _HF_ID.match(name_or_path):
        if in_hf_cache(name_or_path):
            return None
        return (
            f"a Hugging Face id that is not in the local Hugging Face cache "
            f"({hf_cache_folder(name_or_path).parent})"
        )
    if "/" in name_or_path:
        return "no such local model folder"
    return "not a registered name, not a local folder, and not a Hugging Face id 'org/name'"


def check_model_references(config: SiteConfig, source: str = "site config") -> None:
    """Raise ModelUnavailableError listing every model name in ``config`` that cannot resolve."""
    problems = []
    for key, value in model_references(config).items():
        why = unresolvable(value)
        if why is not None:
            problems.append(f"{key} = {value!r}: {why}")
    if problems:
        known = ", ".join(registered_models())
        raise ModelUnavailableError(
            f"{source}: {len(problems)} model name(s) cannot be resolved; known names: {known}; "
            "fix: use a known name (`site-agent models list`), the path of a model folder, or "
            "a Hugging Face id downloaded beforehand (`hf download ORG/NAME`)",
            problems=problems,
        )
