"""The one place where stages call the model packages (annotate, models, adapt, generate, audit).

Imports are lazy so that ``site-agent --help`` and the light stages do not pay for torch, and
so that the mapping from ``site.toml`` sections onto each package's own settings type is
written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.progress import Progress

from protocol import Corpus
from protocol.annotator import AnnotatorSettings
from protocol.audit import AuditReport
from protocol.site_config import AdaptSection, GenerationSection
from shared.errors import ConfigError
from site_agent.progress import ProgressBars


def model_reference(name_or_path: str) -> str:
    """A registered model name or a folder, resolved to what ``from_pretrained`` loads."""
    from site_agent.models import resolve_model

    return str(resolve_model(name_or_path, allow_fetch=True))


@dataclass(frozen=True)
class TrainedEncoder:
    model_dir: Path
    metrics: dict[str, Any] | None


def train_encoder(
    train: Corpus,
    validation: Corpus,
    base_model: str,
    settings: AnnotatorSettings,
    out_dir: Path,
    progress: Progress | None,
) -> TrainedEncoder:
    """Fine-tune ``base_model`` for NER with the paper's hyperparameters."""
    from site_agent.annotate import train_annotator

    bars = ProgressBars(progress)
    result = train_annotator(
        train, validation, model_reference(base_model), settings, out_dir, bars.phase
    )
    metrics = result.best_metrics
    return TrainedEncoder(Path(result.model_dir), metrics.model_dump() if metrics else None)


def check_quality(metrics: dict[str, Any] | None, min_recall: float) -> None:
    """Raise QualityGateError when the annotator's validation recall is below the gate."""
    from site_agent.annotate import check_annotator_quality

    check_annotator_quality(metrics, min_recall)


def annotate(model_dir: Path, corpus: Corpus, progress: Progress | None = None) -> Corpus:
    from site_agent.annotate import machine_annotate

    annotated: Corpus = machine_annotate(model_dir, corpus, progress=ProgressBars(progress).phase)
    return annotated


def adapt(
    texts: list[str], section: AdaptSection, out_dir: Path, progress: Progress | None
) -> Path:
    """LoRA/QLoRA-adapt the generator; returns the adapter folder."""
    from site_agent.adapt import AdaptSettings, adapt_generator

    settings = AdaptSettings(**section.model_dump(exclude={"base_model"}))
    bars = ProgressBars(progress, "adapt steps")
    result = adapt_generator(
        texts, model_reference(section.base_model), settings, out_dir, bars.count
    )
    return Path(result.adapter_dir)


def generation_settings(section: GenerationSection) -> Any:
    """The generator package's settings for this site's ``[generation]`` table."""
    from site_agent.generate import GenerationSettings

    return GenerationSettings(
        backend=section.backend,
        prompt_words=section.prompt_words,
        samples_per_prompt=section.samples_per_prompt,
        size_multiple=section.amount or 4.0,
        top_p=section.top_p,
        temperature=section.temperature,
        min_new_tokens=section.min_new_tokens,
        max_new_tokens=section.max_new_tokens,
        seed=section.seed,
    )


def longest_in_tokens(texts: list[str], model: str) -> int:
    """The longest of ``texts`` in the generator's tokens."""
    from transformers import AutoTokenizer

    from site_agent.generate.plan import longest_in_tokens as measure

    return measure(texts, AutoTokenizer.from_pretrained(model_reference(model)))


def generate(
    prompts: list[str],
    samples: tuple[int, ...],
    max_new_tokens: int,
    base_model: str,
    adapter_dir: Path,
    section: GenerationSection,
    out_path: Path,
    progress: Progress | None,
) -> Corpus:
    """Sample ``samples[i]`` notes from ``prompts[i]``; resumes from a partial ``out_path``."""
    from site_agent.generate import GenerationPlan, generate_corpus

    plan = GenerationPlan(prompts=tuple(prompts), samples=samples, max_new_tokens=max_new_tokens)
    bars = ProgressBars(progress, "generated notes")
    corpus: Corpus = generate_corpus(
        plan,
        model_reference(base_model),
        adapter_dir,
        generation_settings(section),
        out_path,
        bars.count,
    )
    return corpus


def audit_policy(policy: dict[str, Any]) -> Any:
    """The audit's ``AuditPolicy`` for the site's ``[audit.policy]`` table (errors name keys)."""
    from site_agent.audit import AuditPolicy

    try:
        return AuditPolicy.model_validate(policy)
    except ValidationError as exc:
        raise ConfigError(
            "invalid audit policy in the site config",
            problems=[
                f"[audit -> policy -> {' -> '.join(map(str, e['loc']))}] {e['msg']}"
                for e in exc.errors()
            ],
        ) from None


def audit(
    real: Corpus,
    synthetic: Corpus,
    policy: dict[str, Any],
    surrogates: list[tuple[str, str]],
    canaries: Path | None,
    tokenizer: str,
    out_dir: Path,
) -> AuditReport | None:
    """Run the privacy audit; None when the audit package is not installed.

    ``real`` is the gold training split (its spans are the real PII); the surrogates the
    generator saw instead are searched too, as ``(label, surface)`` pairs. N-grams are counted
    in the generator's tokens, as in the seed study.
    """
    try:
        from site_agent.audit import run_audit
    except ImportError:
        return None
    from protocol.audit import CanarySet

    parsed = audit_policy(policy)
    planted = CanarySet.model_validate_json(canaries.read_text()) if canaries else None
    report: AuditReport = run_audit(
        real, synthetic, parsed, out_dir,
        extra_pii_surfaces=surrogates, canaries=planted, tokenizer=tokenizer,
    )  # fmt: skip
    return report


def plant_canaries(corpus: Corpus, k: int, seed: int, locale: str) -> tuple[Corpus, Any]:
    """``corpus`` with ``k`` fake identifiers planted as PII spans, and the CanarySet."""
    from site_agent.audit.canaries import plant_canaries as plant

    return plant(corpus, k, seed=seed, locale=locale)
