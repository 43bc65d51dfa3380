"""The federation run's settings: pyproject ``[tool.flwr.app.config]`` / ``coordinator.toml``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shared.errors import ConfigError
from shared.validation_messages import validation_lines


class FederationSettings(BaseModel):
    """Everything a run needs; keys are the run-config keys with ``-`` for ``_``."""

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
