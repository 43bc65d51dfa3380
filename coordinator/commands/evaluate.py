"""``coordinator evaluate --model SOURCE ...``: score given models at every site, no training."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coordinator.deployment.config_file import load_coordinator_config
from coordinator.deployment.remote import auth_plan, run_remote
from coordinator.given_models import write_models_file
from coordinator.report.summary import summary_lines
from shared.cli_support import AllowInsecureRemoteFlag, InsecureFlag
from shared.errors import UsageError
from shared.transport_policy import choose_transport

CA_FIX = "set root-certificates in [superlink] of coordinator.toml or pass --root-certificates"


def register(app: typer.Typer) -> None:
    @app.command()
    def evaluate(
        model: Annotated[
            list[str],
            typer.Option(
                help="[NAME=]SOURCE: a model folder, an export bundle folder (its encoder, "
                "verified with the site's registered key) or a Hugging Face id. Repeatable."
            ),
        ],
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
        insecure: InsecureFlag = False,
        allow_insecure_remote: AllowInsecureRemoteFlag = False,
    ) -> None:
        """Send the given models to every site for the cross-site matrix; nothing is trained."""
        link, settings = load_coordinator_config(config)
        models = write_models_file(model, settings.registry, settings.output_dir / "given-models")
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
        typer.echo(transport.describe(auth_plan(transport, register=not no_register)), err=True)
        settings = settings.model_copy(update={"evaluate_models": models.resolve()})
        report = run_remote(transport, settings, on_line=typer.echo, register=not no_register)
        for line in summary_lines(report):
            typer.echo(line)
        typer.echo(f"report: {settings.output_dir / 'report.html'}")
