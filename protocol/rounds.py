"""What sites and the coordinator say to each other in a federation run, and what it reports.

Every payload that travels inside a Flower ``Message`` is one of these models, serialised as
JSON into a ``ConfigRecord`` by ``shared.wire`` (text-free by construction: sizes, labels,
hashes, metrics, sanitised error codes). Model weights travel beside it as ``ArrayRecord``.

    roll call    coordinator: (nothing)            site: RollCallReply
    collect      coordinator: CollectInstruction   site: the signed bundle (shared.wire keys)
                                                         + its signature over the nonce
    fedavg       coordinator: FedAvgInstruction    site: FedAvgUpdate + trained weights
                              + the global model
    cross-site   coordinator: CrossSiteInstruction site: CrossSiteReply
                              + every model
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.corpus import LabelMapping, LabelName
from protocol.export import SITE_ID_PATTERN, ExportManifest, QualityOverride, ReleaseApproval

PHASES = ("roll_call", "collect", "aggregate", "cross_site", "report")
Phase = Literal["roll_call", "collect", "aggregate", "cross_site", "report"]

# Codes a site may send instead of a traceback; the coordinator never sees exception text.
SiteErrorCode = Literal[
    "bad_request",
    "no_export_bundle",
    "bundle_unverified",
    "signing_key_missing",  # no signing-key to sign the collect nonce with
    "test_split_missing",
    "test_split_invalid",
    "annotator_missing",
    "model_unpack_failed",
    "label_unmapped",
    "training_failed",
    "evaluation_failed",
    "internal_error",
    # the site's own policy (site_agent/federation/policy.py) refused the request
    "site_policy_invalid",
    "insufficient_support",
    "evaluation_budget_exhausted",
    "privacy_budget_exhausted",  # the test split's lifetime privacy budget would be overspent
    "privacy_ledger_unreadable",  # the site's privacy ledger is missing its lock or damaged
    "max_models_exceeded",
    "max_model_mb_exceeded",
    "max_bootstrap_exceeded",
    "max_labels_exceeded",
    "max_local_epochs_exceeded",
    "max_batch_size_exceeded",
    "max_learning_rate_exceeded",
]

# Reasons the coordinator gives when it leaves a site or bundle out of a round.
ExclusionReason = Literal[
    "no_reply",
    "site_error",
    "unknown_site_key",
    "bad_signature",
    "hash_mismatch",
    "audit_failed",
    "schema_version",
    "site_mismatch",
    "missing_artifact",
    "unlisted_artifact",
    "provenance_mismatch",
    "malformed_bundle",
    "duplicate_site",
    "identity_mismatch",
    "unbound_node",
    "over_limit",  # a reply larger, deeper or longer than the coordinator's caps
    "invalid_reply",  # a reply that does not validate, or raised while it was read
    "stale_reply",  # not signed over this run's collect nonce (replayed, or no key)
    "unsafe_model",  # weights that are not safetensors or not finite; code in a model folder
    "duplicate_corpus",  # the same synthetic corpus sent by two sites
    "non_finite_update",  # a FedAvg update with NaN or infinite weights
    "update_norm_exceeded",  # a FedAvg update that moves the model further than allowed
    "update_norm_outlier",  # a FedAvg step far larger than the round's median step
    "invalid_metrics",  # cross-site figures out of range (NaN, inf, outside [0, 1])
    "approval_mismatch",  # a release approval that does not name this bundle's files
]


class TestSplitSize(ProtocolModel):
    """How big a site's held-out test split is (counts only, never text)."""

    n_documents: int
    n_spans: int
    n_characters: int


class RollCallReply(ProtocolModel):
    """A site's answer to the roll call (its id as everywhere: ``SITE_ID_PATTERN``)."""

    site_id: str = Field(pattern=SITE_ID_PATTERN)
    labels: tuple[LabelName, ...]
    manifest: ExportManifest | None
    test_split: TestSplitSize
    has_baseline: bool


class Estimate(ProtocolModel):
    """A point estimate with its bootstrap confidence interval."""

    value: float
    low: float
    high: float


class ModelMetrics(ProtocolModel):
    """The foundation metrics of one model on one site's test split (aggregate figures only)."""

    token_f1: Estimate
    span_overlap_f1: Estimate
    document_leakage: Estimate
    label_recall: dict[str, float] = Field(default_factory=dict)
    n_documents: int


class PrivacySpend(ProtocolModel):
    """What a site's privacy accountant has spent of its test split's lifetime budget.

    Differential privacy (Gaussian noise, zero-concentrated DP accounting): every figure a site
    returns carries noise of standard deviation ``noise_sd``; ``epsilon_spent`` of the lifetime
    ``epsilon_budget`` is used up (both at ``delta``) over every run and coordinator so far.
    """

    mechanism: Literal["gaussian"]
    unit: Literal["note"] = "note"  # what the guarantee protects: one note of the test split
    epsilon_budget: float = Field(ge=0, le=1e6)
    delta: float = Field(ge=0, le=1)
    epsilon_spent: float = Field(ge=0, le=1e6)
    epsilon_left: float = Field(ge=0, le=1e6)
    models_scored: int = Field(ge=0, le=10**9)
    models_left: int = Field(ge=0, le=10**9)
    epsilon_per_model: float = Field(ge=0, le=1e6)
    noise_sd: float = Field(ge=0, le=1e6)


BASELINE = "__baseline__"  # the name a site's own gold-trained annotator is scored under


class CollectInstruction(ProtocolModel):
    """Send the latest verified bundle, and sign ``nonce`` with it (``shared.freshness``)."""

    nonce: str = Field(pattern=r"^[0-9a-f]{32,128}$")


class FedAvgInstruction(ProtocolModel):
    """One FedAvg round: train the global model sent beside this on the site's synthetic corpus.

    The site maps its corpus through ``mapping`` onto ``labels`` (the global model's head).
    """

    round: int = Field(ge=1)
    labels: tuple[LabelName, ...]
    mapping: LabelMapping | None = None
    local_epochs: int = Field(ge=1)
    learning_rate: float = Field(gt=0)
    batch_size: int = Field(ge=1)
    seed: int


MAX_UNCHANGED_TENSORS = 100_000
"""Structural cap on the names a FedAvg reply may list as unchanged (the payload's bytes are
capped before parsing; the coordinator then accepts only names of the global model's tensors)."""


class FedAvgUpdate(ProtocolModel):
    """A site's answer to a FedAvg round; the trained weights travel beside it.

    ``unchanged`` names the tensors the site's training left exactly as received (the input
    embeddings its annotator keeps fixed, say): they are not sent back, and the coordinator
    takes them from the global model it sent. For the multilingual e5-small encoder that is
    about four fifths of the reply."""

    num_examples: int = Field(ge=0)
    unchanged: tuple[Annotated[str, Field(max_length=1000)], ...] = Field(
        default=(), max_length=MAX_UNCHANGED_TENSORS
    )


class CrossSiteInstruction(ProtocolModel):
    """Score every model sent beside this, and the site's own annotator, on the test split.

    Coordinator models tag in ``labels``; the ``mapped_models`` (exported site encoders) tag in
    their own site's labels, so the scoring site maps their predictions through ``mapping``.
    """

    models: tuple[str, ...]
    mapped_models: tuple[str, ...] = ()
    labels: tuple[LabelName, ...]
    mapping: LabelMapping | None = None
    bootstrap: int = Field(ge=0)
    seed: int
    include_baseline: bool = True  # also score the site's own gold-trained annotator


class CrossSiteReply(ProtocolModel):
    """Metrics per model name (``BASELINE`` for the site's own annotator), or the code instead."""

    metrics: dict[str, ModelMetrics] = Field(default_factory=dict)
    errors: dict[str, SiteErrorCode] = Field(default_factory=dict)
    evaluation_bound: str = Field(
        "", max_length=1000, description="what the site's evaluation policy lets a run learn"
    )
    privacy: PrivacySpend | None = Field(
        None, description="the test split's privacy budget after this reply (None: no noise)"
    )


class Exclusion(ProtocolModel):
    """A site, bundle or evaluation left out of a round, and why."""

    site_id: str
    phase: Phase
    reason: ExclusionReason
    detail: str = ""


class AcceptedBundle(ProtocolModel):
    """A bundle that verified: who sent it and the hashes it was accepted under."""

    site_id: str
    manifest_sha256: str
    signer_key_id: str
    artifacts: dict[str, str]
    n_documents: int
    labels: tuple[LabelName, ...]
    audit_passed: bool
    audit_rules_failed: tuple[str, ...] = ()
    quality_override: QualityOverride | None = None  # a degenerate corpus the site sent anyway
    approval: ReleaseApproval | None = None  # the site's release approval, when it requires one
    created_at: datetime


class TrainedModel(ProtocolModel):
    """A model the coordinator built in the aggregate phase."""

    name: str
    kind: Literal["site", "pooled", "fedavg", "export", "given"]
    trained_on: tuple[str, ...]
    n_training_documents: int
    rounds: int = 0


class RefusedUpdate(ProtocolModel):
    """A FedAvg update the coordinator left out of a round, or took with a lower weight."""

    site_id: str
    reason: Literal[
        "examples_capped",
        "weight_capped",
        "non_finite_update",
        "update_norm_exceeded",
        "update_norm_outlier",
        "invalid_reply",
    ]
    detail: str = ""


class FedAvgRound(ProtocolModel):
    """One FedAvg round: who contributed, who dropped out, and how far the model moved."""

    round: int
    contributors: tuple[str, ...]
    dropped: tuple[str, ...] = ()
    n_examples: int
    update_norm: float  # L2 norm of (new global weights - previous global weights)
    refused: tuple[RefusedUpdate, ...] = ()  # updates left out or capped, and why
    aggregator: str = "weighted-mean"  # how the round's updates were combined


class CrossSiteCell(ProtocolModel):
    """One cell of the models x sites matrix: metrics, or the sanitised reason there are none."""

    model: str
    site_id: str
    metrics: ModelMetrics | None = None
    error: str | None = None


class SiteSummary(ProtocolModel):
    """What the report says about one site: its roll-call facts and audit verdict."""

    site_id: str
    labels: tuple[LabelName, ...]
    test_split: TestSplitSize
    bundle_sha256: str | None = None
    audit_passed: bool | None = None
    audit_rules_failed: tuple[str, ...] = ()
    quality_override: QualityOverride | None = None  # from the accepted bundle's manifest
    approval: ReleaseApproval | None = None  # from the accepted bundle's manifest
    synthetic_documents: int = 0
    evaluation_bound: str = ""  # as the site stated it in its cross-site reply
    privacy: PrivacySpend | None = None  # its last reply's privacy budget (None: no noise)


class ReportProvenance(ProtocolModel):
    """Versions, config digest and dates the report was produced under."""

    tool_version: str
    versions: dict[str, str]
    config_digest: str
    mapping_name: str | None = None
    started_at: datetime
    finished_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class CorpusOverlap(ProtocolModel):
    """Two sites' synthetic corpora that share documents: the MinHash estimate of the Jaccard
    similarity of their (normalised) document sets; ``exact`` when the sets are equal."""

    site_id: str
    other_site_id: str
    similarity: float = Field(ge=0, le=1)
    exact: bool = False


class FederationReport(ProtocolModel):
    """``report.json``: the whole outcome of one federation run."""

    schema_version: str = SCHEMA_VERSION
    sites: tuple[SiteSummary, ...]
    bundles: tuple[AcceptedBundle, ...]
    models: tuple[TrainedModel, ...]
    matrix: tuple[CrossSiteCell, ...]
    baselines: tuple[CrossSiteCell, ...]
    exclusions: tuple[Exclusion, ...]
    labels: tuple[LabelName, ...]
    provenance: ReportProvenance
    mode: Literal["federate", "evaluate"] = "federate"
    fedavg_rounds: tuple[FedAvgRound, ...] = ()
    corpus_overlaps: tuple[CorpusOverlap, ...] = ()  # copied or near-duplicate corpora

    def cell(self, model: str, site_id: str) -> CrossSiteCell | None:
        for cell in self.matrix:
            if cell.model == model and cell.site_id == site_id:
                return cell
        return None

    def baseline(self, site_id: str) -> CrossSiteCell | None:
        return next((b for b in self.baselines if b.site_id == site_id), None)
