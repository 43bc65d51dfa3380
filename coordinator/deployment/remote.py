"""``coordinator run``: launch the federation on a running deployment and stream its progress.

Runs ``flwr run`` against the SuperLink's Control API from a private FLWR_HOME, after
registering the SuperNode auth keys of every site in the registry (already registered keys
are fine). The ServerApp writes the report to ``output-dir`` on the SuperLink host.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from coordinator.deployment.flower_cli import (
    register_supernode,
    registered_supernodes,
    run_app,
    write_connection,
    write_run_config,
)
from coordinator.deployment.keys import load_registry
from coordinator.deployment.processes import repo_root
from coordinator.identity import write_bindings
from coordinator.settings import FederationSettings
from protocol.rounds import FederationReport
from shared.contained import write_contained
from shared.flower_env import DeploymentError, flower_env
from shared.transport_policy import Transport


def register_sites(
    env: dict[str, str],
    settings: FederationSettings,
    work: Path,
    on_line: Callable[[str], None] = print,
) -> dict[str, int]:
    """Register every site's SuperNode auth key; returns ``{site id: node id}`` for each key
    the SuperLink knows (registered now or before), the bindings roll call checks.

    Says, for every site, whether its key was registered, already known, or missing from the
    registry (such a site is refused by a SuperLink with SuperNode authentication on).
    """
    done: dict[str, int] = {}
    known: dict[str, int] | None = None
    for site_id, keys in sorted(load_registry(settings.registry).sites.items()):
        if not keys.auth_public_key_openssh:
            on_line(
                f"SuperNode key of {site_id}: none in {settings.registry}, not registered; "
                f"fix: coordinator keys register --site-id {site_id} --auth-key KEY.pub"
            )
            continue
        key_text = keys.auth_public_key_openssh + "\n"
        public = write_contained(work, f"{site_id}.pub", key_text.encode("utf-8"))
        try:
            done[site_id] = register_supernode(env, public)
        except DeploymentError as exc:
            if "already" not in str(exc).lower():
                raise
            known = registered_supernodes(env) if known is None else known
            key = " ".join(keys.auth_public_key_openssh.split()[:2])
            if key in known:
                done[site_id] = known[key]
            on_line(f"SuperNode key of {site_id}: already registered")
            continue
        on_line(f"SuperNode key of {site_id}: registered as node {done[site_id]}")
    return done


def bind_nodes(settings: FederationSettings, bindings: dict[str, int]) -> FederationSettings:
    """The settings with the node bindings written beside the report."""
    path = write_bindings(settings.output_dir / "node-bindings.json", bindings)
    return settings.model_copy(update={"node_bindings": path})


def auth_plan(transport: Transport, register: bool) -> str:
    """What ``run_remote`` does about SuperNode keys, in the words of the transport line."""
    if not transport.secure:
        return "SuperNode keys not registered (SuperNode authentication needs TLS)"
    if not register:
        return "SuperNode keys not registered (--no-register)"
    return "SuperNode keys of the registry registered before the run"


def run_remote(
    transport: Transport,
    settings: FederationSettings,
    *,
    on_line: Callable[[str], None] = print,
    register: bool = True,
    timeout: float = 24 * 3600,
) -> FederationReport:
    """Register the sites' SuperNode keys (TLS only), submit the run, read its report."""
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="coordinator-flwr-") as tmp:
        home = Path(tmp)
        write_connection(home, transport)
        env = flower_env(home, repo_root())
        if register and transport.secure:
            settings = bind_nodes(settings, register_sites(env, settings, home, on_line))
        run_config = write_run_config(home / "run-config.toml", settings.to_run_config())
        code = run_app(env, repo_root(), run_config, on_line, timeout)
    report = settings.output_dir / "report.json"
    if code != 0 or not report.exists() or report.stat().st_mtime < started:
        raise DeploymentError(
            f"flwr run ended with {code} and no new {report}; fix: check the SuperLink log and "
            "that output-dir is a path on the SuperLink host"
        )
    return FederationReport.model_validate_json(report.read_text(encoding="utf-8"))
