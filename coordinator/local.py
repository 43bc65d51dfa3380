"""A whole federation on this machine: SuperLink + one SuperNode per site on 127.0.0.1.

TLS (own CA, SuperLink certificate with IP and DNS SANs) and SuperNode authentication are on
unless ``secure=False``; ports are chosen free; every process is stopped on the way out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coordinator.deployment import (
    DeploymentError,
    ProcessGroup,
    flower_env,
    free_port,
    wait_for_port,
)
from coordinator.flower_cli import register_supernode, run_app, write_connection, write_run_config
from coordinator.keys import create_tls
from coordinator.settings import FederationSettings
from protocol.rounds import FederationReport

HOST = "127.0.0.1"


@dataclass(frozen=True)
class LocalSite:
    site_id: str
    site_dir: Path
    auth_key: Path  # OpenSSH private key; the ``.pub`` lies beside it

    def node_config(self) -> str:
        return f'site-id="{self.site_id}" site-dir="{self.site_dir}"'


def repo_root() -> Path:
    """The Flower App folder: the checkout whose pyproject has ``[tool.flwr.app]``."""
    root = Path(__file__).resolve().parents[1]
    pyproject = root / "pyproject.toml"
    if not pyproject.exists() or "[tool.flwr.app]" not in pyproject.read_text(encoding="utf-8"):
        raise DeploymentError(
            f"{root}: no pyproject.toml with [tool.flwr.app]; fix: run from a source checkout"
        )
    return root


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


def supernode_argv(site: LocalSite, superlink: str, ca: Path | None) -> list[str]:
    argv = ["flower-supernode", "--superlink", superlink, "--port", str(free_port())]
    argv += ["--node-config", site.node_config()]
    if ca is None:
        return [*argv, "--insecure"]
    return [
        *argv,
        "--root-certificates",
        str(ca),
        "--auth-supernode-private-key",
        str(site.auth_key),
    ]


def run_local_federation(
    work_dir: Path,
    sites: list[LocalSite],
    settings: FederationSettings,
    *,
    on_line: Callable[[str], None] = print,
    secure: bool = True,
    timeout: float = 900.0,
) -> FederationReport:
    """Start everything, run the app once, stop everything; return the report."""
    app_dir = repo_root()
    group = ProcessGroup(work_dir / "logs")
    started = time.time()
    try:
        port = free_port()
        tls_dir = work_dir / "tls" if secure else None
        link_env = flower_env(work_dir / "flwr-home" / "superlink", app_dir)
        superlink = group.start("superlink", superlink_argv(port, tls_dir), link_env)
        wait_for_port(HOST, port, superlink)
        ca = tls_dir / "ca.crt" if tls_dir else None
        cli_env = flower_env(work_dir / "flwr-home" / "cli", app_dir)
        write_connection(work_dir / "flwr-home" / "cli", f"{HOST}:{port}", ca)
        for site in sites:
            if secure:
                register_supernode(cli_env, site.auth_key.with_name(site.auth_key.name + ".pub"))
            env = flower_env(work_dir / "flwr-home" / site.site_id, app_dir)
            group.start(
                f"supernode-{site.site_id}", supernode_argv(site, f"{HOST}:{port}", ca), env
            )
        values = settings.model_copy(update={"expected_sites": len(sites)}).to_run_config()
        run_config = write_run_config(work_dir / "run-config.toml", values)
        code = run_app(cli_env, app_dir, run_config, on_line, timeout)
        report = settings.output_dir / "report.json"
        if code != 0 or not report.exists() or report.stat().st_mtime < started:
            logs = "\n".join(f"--- {p.name}\n{p.tail()}" for p in group.processes)
            raise DeploymentError(
                f"the federation run wrote no report (flwr run exit {code})\n{logs}"
            )
        return FederationReport.model_validate_json(report.read_text(encoding="utf-8"))
    finally:
        group.stop_all()
