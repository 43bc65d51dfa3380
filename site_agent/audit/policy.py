"""The audit policy: what is measured, which documents are dropped, and which rules must hold.

A policy file (TOML or JSON) overrides any field of :class:`AuditPolicy`; unknown fields are
refused with the field named. The defaults follow the papers the toolkit builds on: n-gram
recall for n = 3, 5, 10 (corpus level, all and PII-overlapping n-grams), ROUGE-3/5 recall
against BM25-nearest real documents (k1 = 1.2, b = 0.75), and near-duplicate removal at
similarity >= 0.90.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from protocol.audit import Comparison
from shared.errors import ConfigError
from shared.text_files import read_text
from shared.validation_messages import validation_lines


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NgramRecallSettings(_Settings):
    """Corpus n-gram recall |R ∩ S| / |R| (and over R*, the n-grams overlapping gold PII)."""

    sizes: tuple[int, ...] = Field((3, 5, 10), description="n-gram lengths measured")

    @field_validator("sizes")
    @classmethod
    def _positive(cls, sizes: tuple[int, ...]) -> tuple[int, ...]:
        if not sizes or min(sizes) < 1:
            raise ValueError(f"n-gram sizes must be >= 1 and non-empty, got {sizes}")
        return tuple(sorted(set(sizes)))


class NearestRealSettings(_Settings):
    """BM25 retrieval of the nearest real documents and ROUGE-N recall against them."""

    top_k: int = Field(3, ge=1, description="BM25-nearest real documents per synthetic one")
    k1: float = Field(1.2, gt=0, description="BM25 term-frequency saturation")
    b: float = Field(0.75, ge=0, le=1, description="BM25 length normalisation")
    max_df: float = Field(
        0.5,
        gt=0,
        le=1,
        description="query terms found in more than this fraction of real documents are "
        "left out of BM25 ranking (their idf is near zero; keeps retrieval sparse)",
    )
    query_terms: int | None = Field(
        32,
        ge=1,
        description="rarest terms of each synthetic document used as its BM25 query "
        "(null: all); bounds retrieval cost at scale",
    )
    rouge_sizes: tuple[int, ...] = Field((3, 5), description="ROUGE-N recall sizes")
    report_pairs: int = Field(20, ge=0, description="highest-risk pairs listed in the report")
    batch_size: int = Field(2048, ge=1, description="synthetic documents scored per batch")


class DuplicateSettings(_Settings):
    """Exact (normalised hash) and near (MinHash/LSH over word shingles) duplicates."""

    threshold: float = Field(0.90, gt=0, le=1, description="Jaccard similarity of shingles")
    shingle: int = Field(3, ge=1, description="words per shingle")
    num_perm: int = Field(128, ge=16, description="MinHash permutations")
    seed: int = Field(1, description="MinHash seed")
    false_positive_weight: float = Field(
        0.1, ge=0, le=1, description="LSH weight of false positives against false negatives"
    )


class PiiEchoSettings(_Settings):
    """Gold PII surface strings of the real corpus searched in the synthetic corpus."""

    min_chars: int = Field(
        4,
        ge=1,
        description="shorter surfaces ('H', '70') are not searched: they match everywhere",
    )
    max_document_fraction: float = Field(
        0.01,
        ge=0,
        le=1,
        description="a surface found in the text of more than this fraction of real documents "
        "(at least 1 document is always allowed) is common ('Madrid') and counted, not "
        "treated as identifying",
    )
    require_specific: bool = Field(
        True,
        description="only specific surfaces identify: two capitalised words, an e-mail "
        "address, or six digits that are not a date",
    )
    ignore_labels: tuple[str, ...] = Field((), description="PII labels not searched")
    extra_always_identify: bool = Field(
        False,
        description="every extra surface (the pipeline's pseudonymisation surrogates, "
        "--extra-pii strings) identifies whatever its form; false: by the gold rules above "
        "(an echoed fake age or date is counted, a fake full name still drops the note)",
    )


class QuasiIdentifierSettings(_Settings):
    """Real patients' details found together, or a rare one alone (``quasi_identifiers.py``)."""

    min_together: int = Field(
        2,
        ge=2,
        description="gold surfaces of one real note that flag a synthetic note holding them all "
        "(a date and a town, an age and a date)",
    )
    rare_max_notes: int = Field(
        0,
        ge=0,
        description="a gold surface whose words occur in the text of at most this many real "
        "notes flags a note alone (0: off; 1 flagged most of an independent MEDDOCAN split, "
        "see docs/results.md)",
    )
    rare_min_chars: int = Field(
        4, ge=1, description="shorter surfaces never flag alone ('58', 'H'), only together"
    )
    min_chars: int = Field(2, ge=1, description="shorter surfaces are not searched at all")
    max_document_fraction: float = Field(
        0.01,
        ge=0,
        le=1,
        description="a surface found in the text of more than this fraction of real notes "
        "(and of more than 2, and rare_max_notes + 1) is common ('Madrid', 'varón') and never "
        "counts",
    )
    labels: Literal["quasi", "all"] = Field(
        "quasi",
        description="quasi: only details shared by many people (dates, ages, sex, countries, "
        "towns, professions; shared/label_families.py), since names, ids and e-mails are the PII "
        "echo's; all: every gold label",
    )
    ignore_labels: tuple[str, ...] = Field((), description="PII labels not searched")


class MembershipSettings(_Settings):
    """Membership inference on the membership canaries, from the synthetic corpus alone."""

    bootstrap_samples: int = Field(
        1000, ge=10, description="bootstrap resamples of the confidence intervals"
    )
    confidence: float = Field(0.95, gt=0, lt=1, description="confidence of the intervals")
    exposure_candidates: int = Field(
        1000,
        ge=1,
        description="random secrets each true secret is ranked among (exposure, Secret Sharer)",
    )
    lm_weights: tuple[float, float, float] = Field(
        (0.2, 0.3, 0.5),
        description="interpolation weights of the word unigram, bigram and trigram model "
        "fit to the synthetic corpus (the likelihood attack)",
    )
    seed: int = Field(0, description="seed of the bootstrap and of the candidate secrets")

    @field_validator("lm_weights")
    @classmethod
    def _weights(cls, weights: tuple[float, float, float]) -> tuple[float, float, float]:
        if min(weights) < 0 or weights[0] <= 0 or abs(sum(weights) - 1) > 1e-6:
            raise ValueError(
                f"lm_weights must be >= 0, sum to 1 and give the unigram a weight > 0, "
                f"got {weights}"
            )
        return weights


class FilterSettings(_Settings):
    """Which documents are dropped, in which order (a document counts under its first reason)."""

    enabled: tuple[str, ...] = Field(
        (
            "exact_duplicate_real",
            "near_duplicate_real",
            "canary",
            "pii_echo",
            "quasi_identifier",
            "sensitive_ngram",
            "rouge_recall",
            "exact_duplicate_synthetic",
            "near_duplicate_synthetic",
        ),
        description="filters applied, in this order",
    )
    rouge_n: int = Field(5, ge=1, description="N of the ROUGE filter")
    rouge_threshold: float = Field(
        0.30, ge=0, le=1, description="drop when max ROUGE-N recall against a real doc exceeds"
    )
    sensitive_ngram_n: int = Field(
        10, ge=1, description="drop documents sharing a PII-overlapping n-gram with real docs"
    )
    sensitive_ngram_min_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="only n-grams that hold at least this share of one real identifier's "
        "characters drop a document (0: any overlap, as the sensitive n-gram recall counts); "
        "a header plus one digit of a date holds 10% of it",
    )
    sensitive_ngram_identifiers: Literal["specific", "all"] = Field(
        "specific",
        description="which identifiers the share is of: 'specific' (an n-gram holding that "
        "share of a full name, street, e-mail, id or phone number, or of two identifiers at "
        "once; a date, age, sex, country, town or profession alone is shared by many patients: "
        "on full MEDDOCAN, 'all' flagged 1,781 of 1,939 template notes for random dates and "
        "ages that share digits with real ones after the same form header) or 'all'",
    )


class PolicyRule(_Settings):
    """``metric`` (a dotted figure name, e.g. ``ngram_recall.words.10.sensitive_recall``)
    compared with ``threshold``; ``stage`` picks figures before or after filtering."""

    name: str = Field(min_length=1)
    metric: str = Field(min_length=1)
    comparison: Comparison = "<="
    threshold: float
    stage: Literal["before", "after"] = "after"
    required: bool = Field(
        True, description="if false, the rule is skipped when its figure was not measured"
    )
    description: str = ""


DEFAULT_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(
        name="identifying_10gram_recall_words",
        metric="ngram_recall.words.10.identifying_recall",
        comparison="==",
        threshold=0.0,
        description="no 10-word run of the real corpus holding much of an identifier (the "
        "filter's share) is reproduced",
    ),
    PolicyRule(
        name="sensitive_5gram_recall_words",
        metric="ngram_recall.words.5.sensitive_recall",
        threshold=0.05,
        description="few PII-overlapping 5-word runs of the real corpus are reproduced",
    ),
    PolicyRule(
        name="identifying_10gram_recall_tokens",
        metric="ngram_recall.tokens.10.identifying_recall",
        comparison="==",
        threshold=0.0,
        required=False,
        description="as above over the generator's tokens (when a tokenizer is given)",
    ),
    PolicyRule(
        name="identifying_pii_echo",
        metric="pii_echo.identifying_documents",
        comparison="==",
        threshold=0.0,
        description="no synthetic document contains an identifying PII string (a real gold "
        "string or a surrogate the generator saw)",
    ),
    PolicyRule(
        name="quasi_identifier_documents",
        metric="quasi_identifiers.documents",
        comparison="==",
        threshold=0.0,
        required=False,
        description="no synthetic document holds two gold details of one real note, or one "
        "found in a single real note (when the quasi_identifiers measure runs)",
    ),
    PolicyRule(
        name="max_rouge5_recall",
        metric="nearest_real.rouge_5.max",
        threshold=0.30,
        description="no synthetic document reproduces much of one real document",
    ),
    PolicyRule(
        name="exact_duplicates_of_real",
        metric="duplicates.exact_real_documents",
        comparison="==",
        threshold=0.0,
        description="no synthetic document is a copy of a real one",
    ),
    PolicyRule(
        name="near_duplicates_of_real",
        metric="duplicates.near_real_documents",
        comparison="==",
        threshold=0.0,
        description="no synthetic document is a near-copy of a real one",
    ),
    PolicyRule(
        name="canaries_in_export",
        metric="canaries.found",
        comparison="==",
        threshold=0.0,
        required=False,
        description="no planted canary reaches the export (when canaries were planted)",
    ),
    PolicyRule(
        name="membership_secrets_reproduced",
        metric="membership.secrets_reproduced",
        comparison="==",
        threshold=0.0,
        stage="before",
        required=False,
        description="the generator wrote no membership canary secret, not even in a document "
        "the filters dropped (one would show it memorised its adaptation text)",
    ),
    PolicyRule(
        name="membership_auc",
        metric="membership.auc",
        threshold=0.55,
        required=False,
        description="an adversary holding only the exported corpus cannot tell planted "
        "canaries from kept-out ones (ROC AUC of the strongest attack; 0.5 = chance)",
    ),
    PolicyRule(
        name="kept_documents",
        metric="corpus.kept_documents",
        comparison=">=",
        threshold=1.0,
        description="the export is not empty",
    ),
)


class AuditPolicy(_Settings):
    """Every setting of the audit; its digest is stamped into ``audit.json``."""

    name: str = Field("default", description="policy name stamped into audit.json")
    measures: tuple[str, ...] = Field(
        (
            "ngram_recall",
            "nearest_real",
            "duplicates",
            "pii_echo",
            "quasi_identifiers",
            "canaries",
            "membership",
        ),
        description="registered measures to run",
    )
    ngram_recall: NgramRecallSettings = NgramRecallSettings()
    nearest_real: NearestRealSettings = NearestRealSettings()
    duplicates: DuplicateSettings = DuplicateSettings()
    pii_echo: PiiEchoSettings = PiiEchoSettings()
    quasi_identifiers: QuasiIdentifierSettings = QuasiIdentifierSettings()
    membership: MembershipSettings = MembershipSettings()
    filters: FilterSettings = FilterSettings()
    rules: tuple[PolicyRule, ...] = Field(
        DEFAULT_RULES,
        description="[[audit.policy.rules]]: name, metric, comparison, threshold, stage, "
        "required, description; all must hold for export",
    )

    @field_validator("rules")
    @classmethod
    def _unique_rule_names(cls, rules: tuple[PolicyRule, ...]) -> tuple[PolicyRule, ...]:
        names = [r.name for r in rules]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"rule names must be unique; repeated: {repeated}")
        return rules


def load_policy(path: Path | None) -> AuditPolicy:
    """Read a TOML or JSON policy file; ``None`` gives the default policy."""
    if path is None:
        return AuditPolicy()
    if not path.exists():
        raise ConfigError(f"{path}: no such policy file; fix: check the --policy path")
    text = read_text(path, what="audit policy", error=ConfigError)
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot parse the policy file: {exc}") from exc
    try:
        return AuditPolicy.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid audit policy", problems=validation_lines(exc)) from exc
