"""``deid-studies``: the research harness beside the product, wiring only.

``deid-studies experiment FILE`` runs (or resumes) an experiment file and writes its reports;
``deid-studies specs`` lists the shipped experiment files; ``deid-studies meddocan-sites``
runs the MEDDOCAN multi-site study.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from shared.cli_support import new_app, run_app
from shared.errors import QualityGateError
from studies.specs import spec_names, spec_path

app = new_app(
    "deid-studies", "Experiments and studies over the site pipeline (research, not the product)."
)


@app.command()
def experiment(
    spec_file: Annotated[
        Path | None,
        typer.Argument(
            help="Experiment file (TOML), or the name of a shipped one (`deid-studies specs`); "
            "none with --quick: the shipped quick.toml.",
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
    from studies.runner import run_experiment
    from studies.spec import load_experiment

    if spec_file is None:
        if not quick:
            raise typer.BadParameter("pass an experiment file, or --quick for the quick one")
        spec_file = spec_path("quick.toml")
    elif not spec_file.exists() and spec_file.name in spec_names():
        spec_file = spec_path(spec_file.name)
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


@app.command()
def specs() -> None:
    """List the shipped experiment files and where they are."""
    for name in spec_names():
        typer.echo(f"{name}\t{spec_path(name)}")


@app.command(
    "meddocan-sites",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def meddocan_sites(ctx: typer.Context) -> None:
    """MEDDOCAN split by journal into three sites and federated (`--help` for its options)."""
    from studies.meddocan_sites import main as study

    study(list(ctx.args))


def main() -> None:
    run_app(app)
