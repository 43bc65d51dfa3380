"""``coordinator evaluate --model SOURCE ...``: score given models at every site, no training."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coordinator.commands.remote_rounds import (
    ConfigOption,
    NoRegisterFlag,
    RootCertificatesOption,
    SuperlinkOption,
    launch,
    load_settings,
)
from coordinator.given_models import write_models_file
from shared.cli_support import AllowInsecureRemoteFlag, InsecureFlag


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
        superlink: SuperlinkOption = None,
        config: ConfigOption = Path("coordinator.toml"),
        root_certificates: RootCertificatesOption = None,
        no_register: NoRegisterFlag = False,
        insecure: InsecureFlag = False,
        allow_insecure_remote: AllowInsecureRemoteFlag = False,
    ) -> None:
        """Send the given models to every site for the cross-site matrix; nothing is trained."""
        settings = load_settings(config)
        models = write_models_file(model, settings.registry, settings.output_dir / "given-models")
        launch(
            config,
            superlink,
            root_certificates,
            register=not no_register,
            insecure=insecure,
            allow_insecure_remote=allow_insecure_remote,
            settings_update={"evaluate_models": models.resolve()},
        )
