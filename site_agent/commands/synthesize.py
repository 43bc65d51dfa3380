"""``site-agent synthesize``: run the site pipeline from a site.toml (or the shipped demo)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from protocol.site_config import load_site_config
from shared.errors import UsageError
from site_agent.pipeline import StageRun, run_pipeline
from site_agent.stages import stage_names
from site_agent.summary import summary_table


def cli_overrides(
    corpus: Path | None,
    work_dir: Path | None,
    generator: str | None,
    annotator: str | None,
    amount: float | None,
    device: str | None,
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
    if amount is not None:
        overrides["generation"] = {"amount": amount, "samples_per_prompt": None}
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
        overrides = cli_overrides(corpus, work_dir, generator, annotator, amount, device)
        if demo:
            from site_agent.demo import demo_site_config

            data: dict[str, Any] = {}
            if site_config is not None:
                import tomllib

                data = tomllib.loads(site_config.read_text(encoding="utf-8"))
            config = demo_site_config(
                work_dir or Path("runs/demo"), data, {**overrides, "profile": "demo"}
            )
        elif site_config is None:
            raise UsageError("no --site-config; fix: pass --site-config site.toml or --demo")
        else:
            config = load_site_config(site_config, profile=profile, overrides=overrides)
        console = Console(stderr=True)
        runs: list[StageRun] = []
        try:
            run_pipeline(config, from_stage=from_stage, console=console, runs=runs)
        finally:
            if runs:
                console.print(summary_table(runs))
