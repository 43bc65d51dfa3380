"""``site-agent experiment FILE``: run (or resume) an experiment file; write its reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from shared.errors import QualityGateError

QUICK_SPEC = Path(__file__).resolve().parents[3] / "examples" / "experiments" / "quick.toml"


def register(app: typer.Typer) -> None:
    @app.command()
    def experiment(
        spec_file: Annotated[
            Path | None,
            typer.Argument(
                help="Experiment file (TOML); none with --quick: examples/experiments/quick.toml.",
                show_default=False,
            ),
        ] = None,
        out: Annotated[
            Path | None, typer.Option(help="Output folder (default: runs/experiments/<name>).")
        ] = None,
        quick: Annotated[
            bool,
            typer.Option(
                "--quick",
                help="Shrink the run: tiny models, one repeat, then the file's quick table.",
            ),
        ] = False,
        max_runs: Annotated[
            int | None, typer.Option(min=1, help="Stop after this many runs had to run.")
        ] = None,
    ) -> None:
        """Compare regimes, modes and ablations over repeats; reuse every shared stage."""
        from site_agent.experiment import load_experiment, run_experiment

        if spec_file is None:
            if not quick:
                raise typer.BadParameter("pass an experiment file, or --quick for the quick one")
            spec_file = QUICK_SPEC
        spec, site = load_experiment(spec_file, quick=quick)
        folder = out or Path("runs") / "experiments" / spec.experiment.name
        console = Console(stderr=True)
        results = run_experiment(spec, site, folder, console=console, max_runs=max_runs)
        console.print(f"reports: {folder / 'experiment.md'}", markup=False, highlight=False)
        failed = [r.run_id for r in results if r.status == "failed"]
        if failed:
            raise QualityGateError(
                f"{len(failed)} run(s) failed: {failed}; see {folder / 'experiment.md'}. "
                "fix: correct the cause and run the same command again (finished runs are kept)"
            )
