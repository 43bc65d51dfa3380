"""Stage 9, export: the signed bundle in ``<work_dir>/outbox/<bundle-id>/``.

Only audited synthetic data and what was trained on it leave; the audit gate inside
``build_bundle`` cannot be switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.site_config import SiteConfig
from shared.errors import ConfigError
from shared.provenance import config_digest
from site_agent.export import BundleRequest, build_bundle
from site_agent.models.identity import model_identity
from site_agent.stages.base import Stage, StageContext, StageOutput


def export_request(
    config: SiteConfig, inputs: dict[str, Path], gold_sha: str | None
) -> BundleRequest:
    if config.signing_key is None or not config.signing_key.exists():
        raise ConfigError(
            f"signing_key {config.signing_key} is not set or does not exist; fix: run "
            "`site-agent init --site-id ID --keys-dir DIR` and set signing_key in site.toml"
        )
    return BundleRequest(
        site_id=config.site_id,
        corpus_path=inputs["audit.corpus"],
        audit_report_path=inputs.get("audit.report"),
        signing_key_path=config.signing_key,
        outbox=config.work_dir / "outbox",
        config_digest=config_digest(config),
        base_models={
            "generator": model_identity(config.adapt.base_model).label,
            "annotator": model_identity(config.annotator.base_model).label,
        },
        synthetic_encoder_dir=(
            inputs["train-synthetic.model"] if config.export.include_synthetic_encoder else None
        ),
        site_report_path=(
            inputs["train-synthetic.report"] if config.export.include_site_report else None
        ),
        gold_annotator_sha256=gold_sha,
    )


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "export": config.export,
        "site_id": config.site_id,
        "signing_key": str(config.signing_key),
        "config_digest": config_digest(config),
    }


def _run(ctx: StageContext) -> StageOutput:
    gold_sha = ctx.input_hashes["annotator.model"]
    bundle_dir, manifest = build_bundle(export_request(ctx.config, dict(ctx.inputs), gold_sha))
    return StageOutput(
        artifacts={"bundle": bundle_dir},
        summary={"bundle": bundle_dir.name, "artifacts": len(manifest.artifacts)},
    )


STAGE = Stage(
    name="export",
    run=_run,
    settings=_settings,
    inputs=(
        "audit.corpus",
        "audit.report",
        "train-synthetic.model",
        "train-synthetic.report",
        "annotator.model",  # its hash only: proves the exported encoder is not this one
    ),
    description="sign and bundle what may leave the site",
)
