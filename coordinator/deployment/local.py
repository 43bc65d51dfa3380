"""A whole federation on this machine: SuperLink + one SuperNode per site on 127.0.0.1.

TLS (own CA, SuperLink certificate with IP and DNS SANs) and SuperNode authentication are on
unless ``secure=False``; ports are chosen free; every process is stopped on the way out.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coordinator.deployment.flower_cli import write_connection
from coordinator.deployment.keys import create_tls
from coordinator.deployment.processes import ProcessGroup, repo_root, wait_for_port
from coordinator.deployment.remote import auth_plan, bind_nodes, register_sites, run_remote
from coordinator.settings import FederationSettings
from protocol.rounds import FederationReport
from shared.flower_env import (
    DeploymentError,
    flower_env,
    free_port,
    node_config,
    supernode_argv,
)
from shared.transport_policy import Transport, choose_transport

HOST = "127.0.0.1"


class FederationSite(Protocol):
    """A site that a local federation starts a SuperNode for."""

    @property
    def site_id(self) -> str: ...

    def receive_ca(self, ca_certificate: Path) -> None:
        """Put the coordinator's CA where the site's SuperNode expects it."""

    def supernode_argv(self, transport: Transport) -> list[str]:
        """The command that runs the site's SuperNode in the foreground."""


@dataclass(frozen=True)
class LocalSite:
    """A site folder served by a bare ``flower-supernode`` (tests, built-in layouts)."""

    site_id: str
    site_dir: Path
    auth_key: Path  # OpenSSH private key; the ``.pub`` lies beside it
    signing_key: Path | None = None  # signs the collect nonce (site.toml's signing_key)
    site_config: Path | None = None  # its [federation.evaluation] and [federation.limits]

    def receive_ca(self, ca_certificate: Path) -> None:
        """Nothing to do: the CA is passed on the command line."""

    def supernode_argv(self, transport: Transport) -> list[str]:
        """What ``site-agent join`` runs for a site whose ``[federation]`` table names
        ``site_dir`` as its work dir (see site_agent/federation/join.py)."""
        return supernode_argv(
            transport.address,
            free_port(),
            node_config(
                {
                    "site-id": self.site_id,
                    "site-dir": self.site_dir,
                    "signing-key": self.signing_key,
                    "site-config": self.site_config,
                }
            ),
            root_certificates=transport.root_certificates,
            auth_private_key=self.auth_key,
            insecure=not transport.secure,
        )


@dataclass(frozen=True)
class JoiningSite:
    """A site that joins as a hospital does: ``site-agent join --site-config site.toml``.

    ``root_certificates`` is where its ``[federation]`` table expects the coordinator's CA.
    """

    site_id: str
    site_config: Path
    root_certificates: Path | None = None

    def receive_ca(self, ca_certificate: Path) -> None:
        if self.root_certificates is not None and self.root_certificates != ca_certificate:
            self.root_certificates.parent.mkdir(parents=True, exist_ok=True)
            self.root_certificates.write_bytes(ca_certificate.read_bytes())

    def supernode_argv(self, transport: Transport) -> list[str]:
        argv = [sys.executable, "-m", "site_agent", "join", "--superlink", transport.address]
        argv += ["--site-config", str(self.site_config)]
        return argv if transport.secure else [*argv, "--insecure"]


def superlink_argv(port: int, tls_dir: Path | None) -> list[str]:
    argv = ["flower-superlink", "--host", HOST, "--port", str(port)]
    argv.append("--disable-runtime-dependency-installation")
    if tls_dir is None:
        return [*argv, "--insecure"]
    files = create_tls(tls_dir, [HOST, "localhost"])
    return [
        *argv,
        "--ssl-ca-certfile", str(files.ca_certificate),
        "--ssl-certfile", str(files.certificate),
        "--ssl-keyfile", str(files.key),
        "--enable-supernode-auth",
    ]  # fmt: skip


LOCAL_RUN_TIMEOUT_S = 900.0  # the whole run; the demo's rounds take minutes


def run_local_federation(
    work_dir: Path,
    sites: Sequence[FederationSite],
    settings: FederationSettings,
    *,
    on_line: Callable[[str], None] = print,
    secure: bool = True,
    timeout: float = LOCAL_RUN_TIMEOUT_S,
) -> FederationReport:
    """Start everything, run the app as ``coordinator run`` does, stop everything."""
    app_dir = repo_root()
    group = ProcessGroup(work_dir / "logs")
    try:
        port = free_port()
        tls_dir = work_dir / "tls" if secure else None
        link_env = flower_env(work_dir / "flwr-home" / "superlink", app_dir)
        superlink = group.start("superlink", superlink_argv(port, tls_dir), link_env)
        wait_for_port(HOST, port, superlink)
        ca = tls_dir / "ca.crt" if tls_dir else None
        transport = choose_transport(
            f"{HOST}:{port}",
            ca,
            insecure=ca is None,
            allow_insecure_remote=False,
            ca_fix="run the demo without --insecure",
        )
        on_line(transport.describe(auth_plan(transport, register=True)))
        if transport.secure:  # SuperNode keys first: with auth on, unknown nodes are refused
            write_connection(work_dir / "flwr-home" / "cli", transport)
            cli_env = flower_env(work_dir / "flwr-home" / "cli", app_dir)
            bindings = register_sites(cli_env, settings, work_dir / "flwr-home" / "cli", on_line)
            settings = bind_nodes(settings, bindings)
        for number, site in enumerate(sites):
            if ca is not None:
                site.receive_ca(ca)
            # one FLWR_HOME (and log) per node: two nodes may claim one site id (an impostor),
            # and two SuperNodes installing the app into one FLWR_HOME race
            name = f"supernode-{number}-{site.site_id}"
            env = flower_env(work_dir / "flwr-home" / name, app_dir)
            group.start(name, site.supernode_argv(transport), env)
        run_settings = settings.model_copy(update={"expected_sites": len(sites)})
        try:
            return run_remote(
                transport, run_settings, on_line=on_line, register=False, timeout=timeout
            )
        except DeploymentError as exc:
            logs = "\n".join(f"--- {p.name}\n{p.tail()}" for p in group.processes)
            raise DeploymentError(f"{exc}\n{logs}") from exc
    finally:
        group.stop_all()
