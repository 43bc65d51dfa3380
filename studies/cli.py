"""``deid-studies``: the research harness beside the product, wiring only.

``deid-studies experiment FILE`` runs (or resumes) an experiment file and writes its reports;
``deid-studies specs`` lists the shipped experiment files; ``deid-studies meddocan-sites``
runs the MEDDOCAN multi-site study; ``deid-studies repeats --site-config site.toml`` trains a
finished site run's final encoder again over repeats (real-only, synthetic-only, augmentation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
    from studies.experiment import run_experiment
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
def repeats(
    site_config: Annotated[
        Path,
        typer.Option(
            "--site-config",
            exists=True,
            dir_okay=False,
            help="The site.toml of a finished `site-agent synthesize` run.",
        ),
    ],
    repeats: Annotated[int, typer.Option(min=1, help="Training repeats per regime.")] = 3,
    regime: Annotated[
        list[str] | None,
        typer.Option(help="Regimes to train (repeatable; default: all three)."),
    ] = None,
    fraction: Annotated[
        float, typer.Option(min=0.05, max=0.95, help="Synthetic share of the augmentation set.")
    ] = 0.75,
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default: <work_dir>/repeats).")
    ] = None,
) -> None:
    """Train a finished site run's final encoder again over repeats: real-only,
    synthetic-only and augmentation, scored on its test split (resumes where it stopped)."""
    from shared.progress import new_progress
    from site_agent.config import load_site_config
    from site_agent.plan.estimate import training_hours
    from studies.final_encoder import (
        REGIMES,
        SITE_RUN,
        own_models,
        plan_repeats,
        run_repeats,
        site_run,
        train_with_encoder,
        write_report,
    )

    config = load_site_config(site_config)
    run = site_run(config.work_dir)
    folder = out or config.work_dir / "repeats"
    console = Console(stderr=True)
    annotator = config.annotator
    own = own_models(run, annotator)
    planned, test = plan_repeats(
        run, annotator.training, folder, repeats, regime or REGIMES, fraction, own
    )
    pending = [p for p in planned if p.finished is None]
    hours = sum(
        training_hours(p.train, len(p.validation), len(test), config)
        for p in pending
        if p.train is not None and p.validation is not None
    )
    taken = sum(1 for p in planned if p.finished is not None and p.finished.origin == SITE_RUN)
    mine = f" ({taken} are the site run's own annotators)" if taken else ""
    console.print(
        f"{len(pending)} of {len(planned)} trainings to run{mine}, about {hours:.1f} h on this "
        "machine (the pre-flight's unit costs; an estimate)",
        markup=False, highlight=False,
    )  # fmt: skip
    title = f"{config.site_id}: the final encoder over repeats"
    so_far: list[Any] = []
    with new_progress(console) as progress:
        trainer = train_with_encoder(annotator.base_model, progress)

        def said(repeat: Any, trained_now: bool) -> None:
            how = "trained" if trained_now else "found finished"
            if repeat.origin == SITE_RUN:
                how = "the site run's own annotator"
            f1 = repeat.evaluation.token.micro.f1
            console.print(f"{repeat.regime} seed {repeat.seed}: {how}, token F1 {f1:.3f}")
            so_far.append(repeat)
            if trained_now:  # a report of what is finished, should the run be stopped
                write_report(run, so_far, folder, title, len(planned))

        results = run_repeats(planned, test, trainer, progress, said)
    _, md = write_report(run, results, folder, title, len(planned))
    console.print(f"report: {md}", markup=False, highlight=False)


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
