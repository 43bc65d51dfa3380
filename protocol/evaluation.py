"""Evaluation results: predicted vs gold PII spans, corpus diagnostics, confidence intervals.

These models are written to ``report.json`` by ``site-agent evaluate`` and travel to the
coordinator for the cross-site matrix, so they are protocol types (frozen, extra="forbid").
Every rate is a float in [0, 1]; a ratio whose denominator is zero is reported as 0.0 and the
counts beside it say so.
"""

from __future__ import annotations

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.corpus import Provenance


class Scores(ProtocolModel):
    """Precision, recall and F1 with the counts they came from."""

    precision: float
    recall: float
    f1: float
    true_positives: int = Field(ge=0)
    predicted: int = Field(ge=0)
    support: int = Field(ge=0, description="number of gold items")


class MatchScores(ProtocolModel):
    """Scores under one matching criterion: per label, micro-averaged and macro-averaged.

    Macro scores are the unweighted means of the per-label precision, recall and F1 over every
    label seen in gold or prediction (the scikit-learn/seqeval convention); their counts are
    the micro totals.
    """

    criterion: str
    micro: Scores
    macro: Scores
    per_label: dict[str, Scores]


class TokenScores(MatchScores):
    """seqeval scores over IOB2 tag sequences of the shared word tokenisation."""

    scheme: str = "IOB2"
    mode: str = "strict"
    n_tokens: int = Field(ge=0)
    tag_accuracy: float


class LeakageMetrics(ProtocolModel):
    """Document-level leakage: documents with at least one gold span the prediction missed.

    ``leakage_rate`` follows the label-consistent overlap matching (a gold span left unmatched
    by the greedy one-to-one matching is a miss). The label-agnostic variant asks only whether
    some prediction of any label overlaps the gold span, i.e. whether a redaction would hide it.
    Rates are given over all documents (documents without gold spans cannot leak) and over the
    PII-bearing documents only.
    """

    n_documents: int = Field(ge=0)
    n_pii_documents: int = Field(ge=0)
    leaked_documents: int = Field(ge=0)
    leakage_rate: float
    leakage_rate_pii: float
    missed_spans: int = Field(ge=0)
    label_agnostic_leaked_documents: int = Field(ge=0)
    label_agnostic_leakage_rate: float
    label_agnostic_leakage_rate_pii: float
    label_agnostic_missed_spans: int = Field(ge=0)


class LabelRecall(ProtocolModel):
    """How one label's gold spans fared: recall and leaked documents under the overlap
    matching that document leakage uses (a gold span left unmatched is a miss)."""

    support: int = Field(ge=0, description="gold spans of the label")
    recall: float = Field(description="matched gold spans / support (0.0 without support)")
    leaked_documents: int = Field(ge=0, description="documents with a missed span of the label")


class MissedShape(ProtocolModel):
    """Test identifiers of one label and one surface shape that one annotator misses and
    another catches, with their count. Shapes only, never surfaces (shared/metrics/shapes.py)."""

    label: str
    shape: str = Field(description="letters as X/x runs, digits as d (runs over 4: dddd+)")
    casing: str = Field(description="upper, lower, title, mixed, uncased or none")
    length: str = Field(description="bucket of the surface's character count")
    position: str = Field(description="header, salutation, signature or body")
    count: int = Field(ge=1)


class ConfidenceInterval(ProtocolModel):
    """A percentile bootstrap interval over documents around the full-corpus estimate.

    ``n_undefined`` resamples had a zero denominator (e.g. no gold span drawn) and were left out.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int = 0
    seed: int


class Distribution(ProtocolModel):
    """Summary of a per-document quantity: median, quartiles, mean, range."""

    median: float
    q1: float
    q3: float
    mean: float
    minimum: float
    maximum: float


class LabelDiagnostics(ProtocolModel):
    """How often one label occurs: spans, share of spans, share of PII documents with it."""

    spans: int
    span_share: float
    pii_document_share: float


class CorpusDiagnostics(ProtocolModel):
    """The corpus profile used to compare real and synthetic data (seed 002 Tables 1, 3, 4)."""

    n_documents: int
    n_spans: int
    n_pii_documents: int
    pii_document_share: float
    words: Distribution
    chars: Distribution
    spans_per_document: Distribution
    spans_per_pii_document: Distribution
    labels: dict[str, LabelDiagnostics]
    person_labels: tuple[str, ...]
    pii_documents_without_person_share: float
    pii_documents_with_repetition_share: float
    language: str | None = None
    n_word_tokens: int = 0
    lexical_diversity: float | None = None
    mean_document_lexical_diversity: float | None = None
    provenance: Provenance | None = Field(
        default=None, description="set when the diagnostics are written out on their own"
    )


class EvaluationReport(ProtocolModel):
    """Every metric of one prediction corpus against its gold corpus."""

    schema_version: str = SCHEMA_VERSION
    n_documents: int
    labels: tuple[str, ...]
    label_mapping: str | None = None
    token: TokenScores
    exact: MatchScores
    overlap: MatchScores
    leakage: LeakageMetrics
    confidence_intervals: dict[str, ConfidenceInterval] = Field(default_factory=dict)
    gold_diagnostics: CorpusDiagnostics
    pred_diagnostics: CorpusDiagnostics
    provenance: Provenance = Field(default_factory=Provenance)
