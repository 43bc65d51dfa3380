"""Stage 9, export: the signed bundle in ``<work_dir>/outbox/<bundle-id>/``.

Only audited synthetic data and what was trained on it leave; the audit gate in
``build_bundle`` cannot be switched off. It is bound to this site: the real training text,
re-derived from the gold corpus on disk, must equal ``split.train``, and the audit report
must match it, the generated corpus and the site's policy, surrogates and canaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared.corpus_io import read_corpus
from shared.errors import ConfigError
from shared.provenance import config_digest
from site_agent.audit.seal import seal_key
from site_agent.config import SiteConfig
from site_agent.export.approval import AWAITING_APPROVAL
from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.export.card import CardFacts
from site_agent.models.identity import model_identity, model_licence
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.knobs import pii_surfaces, tokenizer_reference
from site_agent.stages.split import training_split

if TYPE_CHECKING:
    from site_agent.export.gate import AuditBinding


def audit_binding(config: SiteConfig, inputs: dict[str, Path]) -> AuditBinding:
    """What the audit must have compared; refuse when ``split.train`` is not the training
    split of the gold corpus file now on disk."""
    from site_agent.export.gate import AuditBinding, refuse
    from site_agent.privacy.digest import corpus_sha256

    train = inputs["split.train"]
    expected = corpus_sha256(training_split(config))
    if corpus_sha256(read_corpus(train)) != expected:
        raise refuse(
            "training_split",
            f"{train} is not the training split of the gold corpus {config.corpus.path} "
            "(the file was replaced or the corpus changed)",
            "re-run the pipeline from split (site-agent synthesize --from split)",
        )
    return AuditBinding(
        real=train,
        validation=inputs.get("split.validation"),
        synthetic=inputs["annotate.corpus"],
        policy=config.audit.policy,
        pii_surfaces=tuple(pii_surfaces(inputs["pseudonymise.surrogates"])),
        canaries=inputs["pseudonymise.canaries"],
        membership_canaries=inputs.get("pseudonymise.membership_canaries"),
        tokenizer=tokenizer_reference(config),
        seal_key=seal_key(config.signing_key) if config.signing_key else None,
    )


def check_signing_key(config: SiteConfig) -> Path:
    """The key the bundle is signed with; a run whose export could not sign is refused (the
    pipeline checks this before its first stage, not after hours of training)."""
    if config.signing_key is None or not config.signing_key.exists():
        raise ConfigError(
            f"signing_key {config.signing_key} is not set or does not exist: the export stage "
            "signs the bundle with it; fix: run `site-agent init --site-id ID --keys-dir DIR` "
            "and set signing_key in site.toml"
        )
    return config.signing_key


def export_request(
    config: SiteConfig, inputs: dict[str, Path], gold_sha: str | None, outbox: Path | None = None
) -> BundleRequest:
    """What the bundle carries (as ``config.export`` says), signed with the site's key, built
    in ``outbox`` (default: the work dir's)."""
    key = check_signing_key(config)
    return BundleRequest(
        site_id=config.site_id,
        corpus_path=inputs["audit.corpus"],
        audit_report_path=inputs.get("audit.report"),
        signing_key_path=key,
        outbox=outbox or config.work_dir / "outbox",
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
        binding=audit_binding(config, inputs),
        quality=config.export,
        quality_report_path=inputs.get("train-synthetic.report"),
        card=CardFacts(
            mode=config.generation.mode,
            language=config.language,
            licence=model_licence(config.annotator.base_model),
        ),
    )


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "export": config.export,
        "site_id": config.site_id,
        "signing_key": str(config.signing_key),
        "config_digest": config_digest(config),
    }


def export_bundle(
    inputs: dict[str, Path], config: SiteConfig, gold_sha: str | None, outbox: Path | None = None
) -> tuple[Path, int]:
    """Build the signed bundle in ``outbox`` (default ``<work_dir>/outbox/``); returns it and
    its artifact count. It binds the whole site (key, corpus, policy): it takes the config."""
    bundle_dir, manifest = build_bundle(export_request(config, inputs, gold_sha, outbox))
    return bundle_dir, len(manifest.artifacts)


def _export_stage(ctx: StageContext) -> StageOutput:
    gold_sha = ctx.input_hashes["annotator.model"]
    waits = ctx.config.export.require_approval
    # a bundle that needs approval waits in this stage's folder, out of the outbox
    outbox = ctx.stage_dir / AWAITING_APPROVAL if waits else None
    bundle_dir, n_artifacts = export_bundle(dict(ctx.inputs), ctx.config, gold_sha, outbox)
    summary = {"bundle": bundle_dir.name, "artifacts": n_artifacts}
    return StageOutput(
        artifacts={"bundle": bundle_dir},
        summary=summary | ({"awaiting_approval": True} if waits else {}),
    )


INPUTS = (
    "audit.corpus", "audit.report", "train-synthetic.model", "train-synthetic.report",
    "annotator.model",  # its hash only: proves the exported encoder is not this one
    # what the audit must have compared (the gate re-hashes them):
    "split.train", "split.validation", "annotate.corpus", "pseudonymise.surrogates",
    "pseudonymise.canaries", "pseudonymise.membership_canaries",
)  # fmt: skip
STAGE = Stage(
    name="export",
    run=_export_stage,
    settings=_settings,
    inputs=INPUTS,
    description="sign and bundle what may leave the site",
)
