"""``site-agent demo-sites``: three demo hospitals, each running the real pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("demo-sites")
    def demo_sites(
        out: Annotated[Path, typer.Option(help="Folder for the three site folders.")] = Path(
            "runs/demo-sites"
        ),
        jobs: Annotated[
            int | None, typer.Option(min=1, help="Site pipelines run at once (default: cores).")
        ] = None,
    ) -> None:
        """Write three demo sites (own note style and label scheme) and run `synthesize` at each."""
        from site_agent.demo.sites import run_demo_sites

        configs = run_demo_sites(out, jobs=jobs, on_line=lambda line: typer.echo(line, err=True))
        typer.echo(f"sites ready for `coordinator demo --sites {out}`:")
        for config in configs:
            typer.echo(f"  {config}")
