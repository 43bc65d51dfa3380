"""``site-agent synthesize``: run the site pipeline from a site.toml (or the shipped demo)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from site_agent.cli.commands.validate import print_plan, print_preflight
from site_agent.cli.summary import annotator_notes, print_table, summary_table, where_to_look
from site_agent.cli.synthesize_config import config_for_run
from site_agent.export.approval import ApprovalPending, waiting_bundle, waiting_message
from site_agent.pipeline.stage_loop import StageRun
from site_agent.plan.memory import check_fits
from site_agent.stages.left_to_run import LeftToRun, left_to_run
from site_agent.stages.pipeline import check_runnable, run_pipeline, stage_artifact
from site_agent.stages.preflight import run_preflight, training_preflight
from site_agent.stages.registry import stage_names


def cli_overrides(
    corpus: Path | None,
    work_dir: Path | None,
    generator: str | None,
    annotator: str | None,
    amount: float | None,
    device: str | None,
    mode: str | None = None,
) -> dict[str, Any]:
    """Command-line flags as a partial site config (flags win over the TOML file)."""
    overrides: dict[str, Any] = {}
    if corpus is not None:
        overrides["corpus"] = {"path": str(corpus.resolve())}
    if work_dir is not None:
        overrides["work_dir"] = str(work_dir.resolve())
    if generator is not None:
        overrides["adapt"] = {"base_model": generator}
    if annotator is not None:
        overrides["annotator"] = {"base_model": annotator}
    generation: dict[str, Any] = {}
    if amount is not None:
        generation |= {"amount": amount, "samples_per_prompt": None}
    if mode is not None:
        generation["mode"] = mode
    if generation:
        overrides["generation"] = generation
    if device is not None:
        overrides["device"] = device
    return overrides


def register(app: typer.Typer) -> None:
    @app.command()
    def synthesize(
        site_config: Annotated[
            Path | None, typer.Option("--site-config", help="The site's site.toml.")
        ] = None,
        corpus: Annotated[Path | None, typer.Option(help="Gold corpus (overrides toml).")] = None,
        work_dir: Annotated[Path | None, typer.Option(help="Where stages write.")] = None,
        generator: Annotated[str | None, typer.Option(help="Generator model name/path.")] = None,
        annotator: Annotated[str | None, typer.Option(help="Encoder model name/path.")] = None,
        amount: Annotated[
            float | None, typer.Option(help="Synthetic docs per training doc (4.0 = 4x).")
        ] = None,
        device: Annotated[str | None, typer.Option(help="auto | cpu | cuda")] = None,
        mode: Annotated[
            str | None,
            typer.Option(help="Generation mode: annotate | tagged | template (overrides toml)."),
        ] = None,
        profile: Annotated[str | None, typer.Option(help="default | demo")] = None,
        from_stage: Annotated[
            str | None,
            typer.Option("--from", help=f"Re-run from this stage on: {', '.join(stage_names())}."),
        ] = None,
        demo: Annotated[
            bool, typer.Option("--demo", help="Run the shipped demo corpus and profile.")
        ] = False,
    ) -> None:
        """Split, pseudonymise, train, adapt, generate, annotate, audit, evaluate, export."""
        overrides = cli_overrides(corpus, work_dir, generator, annotator, amount, device, mode)
        config = config_for_run(site_config, demo=demo, profile=profile, overrides=overrides)
        console = Console(stderr=True)
        report = training_preflight(config)
        if report is not None:
            print_preflight(report, console)
        plan = run_preflight(config, from_stage=from_stage)
        if plan is not None:
            print_plan(plan, console)
            print_left(left_to_run(plan, config, from_stage), console)
            check_fits(plan, str(site_config or "the demo profile"))
            check_runnable(config)  # nothing is written for a run that cannot start
        runs: list[StageRun] = []
        try:
            run_pipeline(config, from_stage=from_stage, console=console, runs=runs, plan=plan)
        finally:
            if runs:
                print_table(console, summary_table(runs, plan))
                for note in annotator_notes(runs):
                    console.print(f"[yellow]{note}[/]", highlight=False)
        for line in where_to_look(runs, config.work_dir):
            console.print(line, markup=False, highlight=False, soft_wrap=True)  # one line in a log
        exported = stage_artifact(config.work_dir, "export", "bundle")
        waiting = waiting_bundle(exported, config.work_dir / "outbox")
        if config.export.require_approval and waiting is not None:
            raise ApprovalPending(waiting_message(waiting, config.work_dir))


def print_left(left: LeftToRun, console: Console) -> None:
    """What a resumed run still has to do of the estimate; nothing for a run starting afresh."""
    if not left.done and not left.partly:
        return
    done = [f"done: {', '.join(left.done)}"] if left.done else []
    console.print(
        f"  left to run in this work dir: about {left.hours:.1f} h "
        f"({'; '.join([*done, *left.partly])})",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
