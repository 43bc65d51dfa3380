"""``coordinator demo --sites DIR``: federate the demo sites on 127.0.0.1, report written."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coordinator.deployment.local import LOCAL_RUN_TIMEOUT_S


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        sites: Annotated[
            Path, typer.Option(help="Folder that `site-agent demo-sites` filled.")
        ] = Path("runs/demo-sites"),
        out: Annotated[Path, typer.Option(help="Folder for the report and the models.")] = Path(
            "runs/federation-demo"
        ),
        insecure: Annotated[
            bool, typer.Option(help="Run without TLS and SuperNode authentication.")
        ] = False,
        timeout: Annotated[
            float,
            typer.Option(
                min=1.0,
                help="Seconds the whole run may take before it is stopped (a larger study "
                "needs hours).",
            ),
        ] = LOCAL_RUN_TIMEOUT_S,
    ) -> None:
        """Start a SuperLink, let every demo site join, run every round, stop them all."""
        from coordinator.demo import run_demo  # imports torch; keep the CLI start fast
        from coordinator.report.summary import summary_lines

        report = run_demo(sites, out, on_line=typer.echo, secure=not insecure, timeout=timeout)
        for line in summary_lines(report):
            typer.echo(line)
        typer.echo(f"report: {out / 'report.html'}")
