"""The federation run's settings: pyproject ``[tool.flwr.app.config]`` / ``coordinator.toml``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shared.bundle_limits import BundleLimits
from shared.errors import ConfigError
from shared.validation_messages import validation_lines

_LIMITS = BundleLimits()


def _cap(name: str) -> int:
    """A cap of :class:`BundleLimits` as a run-config key, with its safe default."""
    field = BundleLimits.model_fields[name]
    return Field(default=getattr(_LIMITS, name), ge=1, description=field.description)


class FederationSettings(BaseModel):
    """Everything a run needs; keys are the run-config keys with ``-`` for ``_``.

    The ``max-*`` keys cap what one site's reply may hold (``shared.bundle_limits``); a reply
    over a cap is excluded before it is parsed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    registry: Path
    base_model: Path
    output_dir: Path
    mapping: Path | None = None
    fedavg_rounds: int = Field(default=2, ge=0)
    local_epochs: int = Field(default=1, ge=1)
    train_epochs: int = Field(default=3, ge=1)
    # steps the coordinator's per-site and pooled trainings reach at least, adding epochs
    # (the site annotator's recipe); 0: exactly train-epochs
    train_min_steps: int = Field(default=300, ge=0)
    learning_rate: float = Field(default=1e-4, gt=0)
    batch_size: int = Field(default=16, ge=1)
    min_sites: int = Field(default=1, ge=1)
    expected_sites: int = Field(default=0, ge=0)
    wait_for_sites: float = Field(default=60.0, ge=0)
    reply_timeout: float = Field(default=600.0, gt=0)
    bootstrap: int = Field(default=200, ge=0)
    cross_site_batch_mb: int = Field(default=1024, ge=1)  # models per cross-site message
    seed: int = 13
    # where FedAvg starts: the base encoder, or the mean of the sites' exported encoders
    fedavg_start: Literal["base", "exported"] = "base"
    # {site id: SuperNode id} from registering the sites' auth keys: a node must say it is
    # the site whose key it authenticated with (written by the deployment, not by hand)
    node_bindings: Path | None = None
    # evaluation only: {model name: model folder} to score at every site (no training)
    evaluate_models: Path | None = None
    # FedAvg: an update whose L2 distance from the global model exceeds this fraction of the
    # global model's own L2 norm is refused (an honest round moves a model far less)
    max_update_norm_ratio: float = Field(default=0.5, gt=0)
    # FedAvg, relative to the round's other sites (coordinator/aggregate/influence.py): a
    # site's weight is at most this many times the median example count of the others ...
    fedavg_max_weight_ratio: float = Field(default=2.0, gt=0)
    # ... and its step, whole or in one tensor, at most this many times the round's median step
    fedavg_max_norm_ratio: float = Field(default=4.0, gt=1)
    # how the updates are combined (coordinator/aggregate/aggregators.py; checked when the
    # run starts): weighted-mean, median or trimmed-mean
    fedavg_aggregator: str = "weighted-mean"
    # collect: two sites' corpora sharing at least this share of their documents (MinHash
    # estimate of the Jaccard similarity) are flagged in the report (coordinator/collect/
    # duplicates.py); the same documents exclude the later bundle
    near_duplicate_share: float = Field(default=0.5, gt=0, le=1)
    max_manifest_bytes: int = _cap("max_manifest_bytes")
    max_json_bytes: int = _cap("max_json_bytes")
    max_tokenizer_bytes: int = _cap("max_tokenizer_bytes")
    max_json_depth: int = _cap("max_json_depth")
    max_json_members: int = _cap("max_json_members")
    max_documents: int = _cap("max_documents")
    max_labels: int = _cap("max_labels")
    max_document_chars: int = _cap("max_document_chars")
    max_corpus_bytes: int = _cap("max_corpus_bytes")
    max_files: int = _cap("max_files")
    max_file_bytes: int = _cap("max_file_bytes")
    max_bundle_bytes: int = _cap("max_bundle_bytes")
    max_tensors: int = _cap("max_tensors")
    max_reply_bytes: int = _cap("max_reply_bytes")

    @property
    def limits(self) -> BundleLimits:
        """The caps on one site's reply, as the verifier takes them."""
        return BundleLimits.model_validate(self.model_dump(include=set(BundleLimits.model_fields)))

    @model_validator(mode="after")
    def _paths_exist(self) -> FederationSettings:
        missing = [
            f"{name.replace('_', '-')} = {path} does not exist"
            for name, path in (
                ("registry", self.registry),
                ("base_model", self.base_model),
                ("mapping", self.mapping),
                ("node_bindings", self.node_bindings),
                ("evaluate_models", self.evaluate_models),
            )
            if path is not None and not path.exists()
        ]
        if missing:
            raise ValueError("; ".join(missing) + "; fix: point the setting at an existing path")
        return self

    @classmethod
    def from_run_config(cls, config: Mapping[str, Any]) -> FederationSettings:
        """Parse Flower's run config (``""`` means unset)."""
        values = {k.replace("-", "_"): v for k, v in config.items() if v != ""}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(
                "invalid federation run config", problems=validation_lines(exc)
            ) from exc

    def to_run_config(self) -> dict[str, str | int | float]:
        """The inverse of :meth:`from_run_config` (paths as strings, unset as ``""``)."""
        return {
            k.replace("_", "-"): ("" if v is None else str(v) if isinstance(v, Path) else v)
            for k, v in self.model_dump().items()
        }
