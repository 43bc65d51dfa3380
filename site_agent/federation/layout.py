"""Where a site keeps what the federation asks for, read from the SuperNode's ``--node-config``.

Keys: ``site-id`` and ``site-dir`` (the pipeline's work dir) are required. By default the
site's files are where ``site-agent synthesize`` puts them: bundles in ``<site-dir>/outbox/``,
the held-out test split and the gold-trained annotator where the ``stage.json`` records of the
``split`` (artifact ``test``) and ``annotator`` (artifact ``model``) stages say they are
(``stage_records.py``). ``export-dir``, ``test-split`` and ``annotator-dir`` override;
``signing-public-key`` names the key the site verifies its own bundle with before sending
(default: the one the export stage leaves in the outbox); ``signing-key`` the private key that
signs the coordinator's collect nonce into the reply (``site-agent join`` passes site.toml's
``signing_key``). ``site-config`` names the site.toml whose ``[federation.evaluation]`` and
``[federation.limits]`` (``policy.py``) the site holds the coordinator to; without it the safe
defaults apply.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol.rounds import SiteErrorCode
from shared.config_files import read_toml
from shared.errors import ConfigError
from site_agent.federation.policy import EvaluationPolicy, InstructionLimits
from site_agent.federation.stage_records import stage_artifact

log = logging.getLogger(__name__)


class SiteFailure(Exception):
    """A failure the site reports to the coordinator as a code only (see ``SiteErrorCode``)."""

    def __init__(self, code: SiteErrorCode) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class SiteLayout:
    site_id: str
    site_dir: Path
    export_dir: Path
    test_split: Path | None
    annotator_dir: Path | None
    signing_public_key: Path | None = None
    signing_key: Path | None = None
    evaluation: EvaluationPolicy = field(default_factory=EvaluationPolicy)
    limits: InstructionLimits = field(default_factory=InstructionLimits)

    @classmethod
    def from_node_config(cls, config: Mapping[str, Any]) -> SiteLayout:
        site_id, site_dir = config.get("site-id"), config.get("site-dir")
        if not site_id or not site_dir:
            raise SiteFailure("bad_request")
        root = Path(str(site_dir))
        return cls(
            site_id=str(site_id),
            site_dir=root,
            export_dir=Path(str(config.get("export-dir") or root / "outbox")),
            test_split=_path(config.get("test-split")) or stage_artifact(root, "split", "test"),
            annotator_dir=(
                _path(config.get("annotator-dir")) or stage_artifact(root, "annotator", "model")
            ),
            signing_public_key=_path(config.get("signing-public-key")),
            signing_key=_path(config.get("signing-key")),
            **site_policy(_path(config.get("site-config"))),
        )


def site_policy(site_config: Path | None) -> dict[str, Any]:
    """``evaluation`` and ``limits`` from the ``[federation]`` table of ``site_config``."""
    if site_config is None:
        return {}
    try:
        table = read_toml(site_config, what="site config").get("federation", {})
        return {
            "evaluation": EvaluationPolicy.model_validate(table.get("evaluation", {})),
            "limits": InstructionLimits.model_validate(table.get("limits", {})),
        }
    except (ConfigError, ValidationError, AttributeError) as exc:
        log.error(
            "%s: [federation.evaluation] or [federation.limits] is invalid: %s", site_config, exc
        )
        raise SiteFailure("site_policy_invalid") from exc


def _path(value: object) -> Path | None:
    return Path(str(value)) if value else None
