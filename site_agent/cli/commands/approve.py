"""``site-agent approve``: a reviewer's release approval of a bundle that waits for one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from site_agent.cli.synthesize_config import config_for_run
from site_agent.export.approval import approve_bundle
from site_agent.stages.export import check_signing_key


def register(app: typer.Typer) -> None:
    @app.command()
    def approve(
        bundle: Annotated[
            Path, typer.Argument(help="The waiting bundle folder (the export stage names it).")
        ],
        by: Annotated[str, typer.Option("--by", help="Who approves the release (a name).")],
        site_config: Annotated[
            Path | None,
            typer.Option("--site-config", help="The site's site.toml (its signing key)."),
        ] = None,
    ) -> None:
        """Approve a bundle's release (export's require_approval): signed into its manifest,
        then the bundle moves to the outbox."""
        config = config_for_run(site_config)
        key = check_signing_key(config)
        target, manifest = approve_bundle(bundle, by, key, config.work_dir / "outbox")
        approval = manifest.approval
        assert approval is not None
        Console(stderr=True).print(
            f"approved by {approval.reviewer} at {approval.approved_at:%Y-%m-%d %H:%M:%S} UTC; "
            f"content {approval.approved_sha256}; in the outbox: {target}",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
