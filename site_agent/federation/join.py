"""``site-agent join``: start this site's SuperNode from the ``[federation]`` table of site.toml.

    [federation]
    site-id = "site-a"
    work-dir = "/srv/site-a"                  # the pipeline work dir (outbox/, NN-split/...)
    auth-private-key = "keys/supernode.key"   # from `site-agent auth-key`
    root-certificates = "tls/ca.crt"          # the coordinator's CA
    runtime-port = 9094                       # local ClientApp runtime API port (0: any free)
    signing-public-key = "keys/site.pub.pem"  # the bundle is verified with it before sending
    signing-key = "keys/site.key.pem"         # signs the coordinator's collect nonce
                                              # (default: site.toml's signing_key)

    [federation.evaluation]                   # what the site returns when asked to score
    [federation.limits]                       # the most a coordinator message may ask

(``policy.py``). The ClientApp reads the two tables from this site.toml at every message.
Relative paths are taken from the folder of site.toml.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from protocol.export import SITE_ID_PATTERN
from shared.config_files import read_toml, resolve_paths
from shared.errors import ConfigError
from shared.flower_env import DeploymentError, flower_env, node_config, supernode_argv
from shared.transport_policy import Transport, choose_transport
from shared.validation_messages import validation_lines
from site_agent.federation.accountant import budget_lines
from site_agent.federation.layout import SiteFailure
from site_agent.federation.policy import EvaluationPolicy, InstructionLimits

PATHS = (
    "work-dir",
    "auth-private-key",
    "root-certificates",
    "export-dir",
    "test-split",
    "annotator-dir",
    "signing-public-key",
    "signing-key",
)
CA_FIX = "set root-certificates in [federation] of site.toml to the coordinator's ca.crt"


class JoinConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    site_id: str = Field(alias="site-id", pattern=SITE_ID_PATTERN)
    work_dir: Path = Field(alias="work-dir")
    auth_private_key: Path | None = Field(default=None, alias="auth-private-key")
    root_certificates: Path | None = Field(default=None, alias="root-certificates")
    runtime_port: int = Field(default=9094, ge=0, le=65535, alias="runtime-port")
    export_dir: Path | None = Field(default=None, alias="export-dir")
    test_split: Path | None = Field(default=None, alias="test-split")
    annotator_dir: Path | None = Field(default=None, alias="annotator-dir")
    signing_public_key: Path | None = Field(default=None, alias="signing-public-key")
    signing_key: Path | None = Field(default=None, alias="signing-key")
    evaluation: EvaluationPolicy = Field(default_factory=EvaluationPolicy)
    limits: InstructionLimits = Field(default_factory=InstructionLimits)
    _source: Path | None = PrivateAttr(default=None)  # the site.toml this came from

    def node_config(self) -> str:
        """The ``--node-config`` string the ClientApp reads (see federation/layout.py)."""
        return node_config(
            {
                "site-id": self.site_id,
                "site-dir": self.work_dir,
                "export-dir": self.export_dir,
                "test-split": self.test_split,
                "annotator-dir": self.annotator_dir,
                "signing-public-key": self.signing_public_key,
                "signing-key": self.signing_key,
                "site-config": self._source,
            }
        )


def load_join_config(path: Path) -> JoinConfig:
    document = read_toml(path, what="site config")
    raw = document.get("federation")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: no [federation] table; fix: add one as in deploy/site.toml")
    if "signing-key" not in raw and isinstance(document.get("signing_key"), str):
        raw = {**raw, "signing-key": document["signing_key"]}  # the export's key signs the nonce
    values = resolve_paths(raw, PATHS, path.parent)
    try:
        config = JoinConfig.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid [federation]", problems=validation_lines(exc)) from exc
    config._source = path.resolve()
    return config


def join_argv(config: JoinConfig, superlink: str, insecure: bool) -> list[str]:
    """The ``flower-supernode`` command line for this site."""
    return supernode_argv(
        superlink,
        config.runtime_port,
        config.node_config(),
        root_certificates=config.root_certificates,
        auth_private_key=config.auth_private_key,
        insecure=insecure,
    )


def auth_state(config: JoinConfig, transport: Transport) -> str:
    if transport.secure:
        return f"SuperNode auth on (key {config.auth_private_key})"
    return "SuperNode auth off (it needs TLS)"


def privacy_status(config: JoinConfig) -> list[str]:
    """The test split's privacy spend as the operator sees it when the site joins."""
    try:
        return budget_lines(config.work_dir, config.evaluation, config.test_split)
    except SiteFailure as failure:
        return [
            f"privacy ledger {config.work_dir / config.evaluation.ledger} cannot be read "
            f"({failure.code}): every evaluation will be refused; fix: restore it from a backup"
        ]


def join(
    config: JoinConfig,
    superlink: str,
    *,
    insecure: bool = False,
    allow_insecure_remote: bool = False,
    on_status: Callable[[str], None] = print,
) -> None:
    """Run the SuperNode in the foreground until it stops; says first what protects the link.

    TLS and SuperNode auth unless ``insecure`` (loopback only without
    ``allow_insecure_remote``, see shared/transport_policy.py); a SuperNode that ends with a
    non-zero status raises.
    """
    transport = choose_transport(
        superlink,
        config.root_certificates,
        insecure=insecure,
        allow_insecure_remote=allow_insecure_remote,
        ca_fix=CA_FIX,
    )
    argv = join_argv(config, transport.address, insecure=not transport.secure)
    on_status(transport.describe(auth_state(config, transport)))
    for line in privacy_status(config):
        on_status(line)
    code = subprocess.call(argv, env=flower_env(config.work_dir / ".flwr"))
    if code != 0:
        raise DeploymentError(
            f"flower-supernode ended with status {code} (its messages are above); fix: check "
            "the SuperLink address, that the CA and auth key are the ones the coordinator "
            "issued and registered, and that runtime-port is free"
        )
