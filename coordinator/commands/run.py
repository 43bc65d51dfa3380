"""``coordinator run --superlink ADDR [--config coordinator.toml]``: run the federation."""

from __future__ import annotations

from pathlib import Path

import typer

from coordinator.commands.remote_rounds import (
    ConfigOption,
    NoRegisterFlag,
    RootCertificatesOption,
    SuperlinkOption,
    launch,
)
from shared.cli_support import AllowInsecureRemoteFlag, InsecureFlag


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        superlink: SuperlinkOption = None,
        config: ConfigOption = Path("coordinator.toml"),
        root_certificates: RootCertificatesOption = None,
        no_register: NoRegisterFlag = False,
        insecure: InsecureFlag = False,
        allow_insecure_remote: AllowInsecureRemoteFlag = False,
    ) -> None:
        """Launch the rounds on a running deployment, stream progress, write the report."""
        launch(
            config,
            superlink,
            root_certificates,
            register=not no_register,
            insecure=insecure,
            allow_insecure_remote=allow_insecure_remote,
        )
