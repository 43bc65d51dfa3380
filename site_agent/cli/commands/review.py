"""``site-agent review``: the release review page for the site's privacy officer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from shared.errors import UsageError
from site_agent.cli.synthesize_config import config_for_run
from site_agent.review.build import write_review


def register(app: typer.Typer) -> None:
    @app.command()
    def review(
        work_dir: Annotated[
            Path | None, typer.Option("--work-dir", help="The pipeline's work dir.")
        ] = None,
        site_config: Annotated[
            Path | None,
            typer.Option("--site-config", help="The site's site.toml (its work dir)."),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option(help="Where to write the page (default: WORK_DIR/review/...)."),
        ] = None,
        sample: Annotated[int, typer.Option(min=0, help="Exported notes to show.")] = 5,
        seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    ) -> None:
        """Write the local "Release review" page: what leaves, the audit, a sample, the
        dropped notes beside their nearest real notes. Never exported."""
        if work_dir is None:
            if site_config is None:
                raise UsageError("no --work-dir; fix: pass --work-dir DIR or --site-config")
            work_dir = config_for_run(site_config).work_dir
        page = write_review(work_dir, out, sample, seed, site_config)
        Console(stderr=True).print(
            f"release review: {page} (local only: it shows real notes; open it in a browser)",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
