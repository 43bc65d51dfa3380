"""What ``coordinator run`` and ``coordinator evaluate`` share: the deployment options and the
launch on a running SuperLink (transport chosen, auth plan shown, report summarised)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from coordinator.deployment.config_file import load_coordinator_config
from coordinator.deployment.remote import auth_plan, run_remote
from coordinator.report.summary import summary_lines
from coordinator.settings import FederationSettings
from shared.errors import UsageError
from shared.transport_policy import choose_transport

CA_FIX = "set root-certificates in [superlink] of coordinator.toml or pass --root-certificates"

SuperlinkOption = Annotated[
    str | None, typer.Option(help="SuperLink address host:port (overrides the config).")
]
ConfigOption = Annotated[
    Path, typer.Option(help="coordinator.toml with \\[superlink] and \\[federation].")
]
RootCertificatesOption = Annotated[
    Path | None, typer.Option(help="CA certificate of the SuperLink (overrides config).")
]
NoRegisterFlag = Annotated[
    bool, typer.Option("--no-register", help="Do not register SuperNode auth keys.")
]


def load_settings(config: Path) -> FederationSettings:
    return load_coordinator_config(config)[1]


def launch(
    config: Path,
    superlink: str | None,
    root_certificates: Path | None,
    *,
    register: bool,
    insecure: bool,
    allow_insecure_remote: bool,
    settings_update: dict[str, Any] | None = None,
) -> None:
    """Run the rounds on the SuperLink that ``config`` (or ``superlink``) names."""
    link, settings = load_coordinator_config(config)
    address = superlink or link.address
    if not address:
        raise UsageError(
            "no SuperLink address; fix: --superlink HOST:PORT or address in [superlink]"
        )
    transport = choose_transport(
        address,
        root_certificates or link.root_certificates,
        insecure=insecure,
        allow_insecure_remote=allow_insecure_remote,
        ca_fix=CA_FIX,
    )
    typer.echo(transport.describe(auth_plan(transport, register=register)), err=True)
    if settings_update:
        settings = settings.model_copy(update=settings_update)
    report = run_remote(transport, settings, on_line=typer.echo, register=register)
    for line in summary_lines(report):
        typer.echo(line)
    typer.echo(f"report: {settings.output_dir / 'report.html'}")
