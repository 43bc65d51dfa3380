"""``coordinator run --superlink ADDR [--config coordinator.toml]``: run the federation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coordinator.config_file import SuperLinkAddress, load_coordinator_config
from coordinator.remote import run_remote
from coordinator.report.summary import summary_lines
from shared.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        superlink: Annotated[
            str | None, typer.Option(help="SuperLink address host:port (overrides the config).")
        ] = None,
        config: Annotated[
            Path, typer.Option(help="coordinator.toml with \\[superlink] and \\[federation].")
        ] = Path("coordinator.toml"),
        root_certificates: Annotated[
            Path | None, typer.Option(help="CA certificate of the SuperLink (overrides config).")
        ] = None,
        no_register: Annotated[
            bool, typer.Option("--no-register", help="Do not register SuperNode auth keys.")
        ] = False,
    ) -> None:
        """Launch the rounds on a running deployment, stream progress, write the report."""
        link, settings = load_coordinator_config(config)
        updates = {
            k: v
            for k, v in {"address": superlink, "root_certificates": root_certificates}.items()
            if v is not None
        }
        link = SuperLinkAddress.model_validate({**link.model_dump(), **updates})
        if not link.address:
            raise UsageError("no SuperLink address; fix: --superlink HOST:PORT or [superlink]")
        report = run_remote(link, settings, on_line=typer.echo, register=not no_register)
        for line in summary_lines(report):
            typer.echo(line)
        typer.echo(f"report: {settings.output_dir / 'report.html'}")
