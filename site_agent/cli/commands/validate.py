"""``site-agent validate CORPUS``: check a corpus against the contract and print diagnostics.

Kept light on purpose (no torch/transformers/datasets import on this path) so that a site can
check its corpus in seconds before anything else runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from protocol import Corpus
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, require_documents
from shared.errors import CorpusFormatError
from shared.provenance import make_provenance, sha256_tree
from site_agent.annotator.settings import GoldAnnotatorSettings
from site_agent.plan.estimate import RunPlan, plan_lines
from site_agent.stages.preflight import (
    PreflightReport,
    default_settings,
    preflight,
    preflight_lines,
)


def print_problems(exc: CorpusFormatError, console: Console) -> None:
    """The error and every problem it lists, one per line."""
    console.print(
        f"[bold red]invalid corpus:[/] {escape(exc.message)}", highlight=False, soft_wrap=True
    )
    for problem in exc.problems:
        console.print(f"  - {problem}", highlight=False, soft_wrap=True, markup=False)


def annotator_settings(site_config: Path | None) -> GoldAnnotatorSettings:
    """The ``[annotator]`` table of ``site_config``, or the defaults."""
    if site_config is None:
        return default_settings()
    from site_agent.config import load_site_config

    return load_site_config(site_config).annotator


def print_preflight(report: PreflightReport, console: Console) -> None:
    """The pre-flight lines under a heading (the corpus as the annotator's training data)."""
    console.print("[bold]pre-flight[/] (as annotator training data):", highlight=False)
    for line in preflight_lines(report):
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def print_plan(plan: RunPlan, console: Console) -> None:
    """The generator recipe and the per-stage estimate under a heading."""
    console.print("[bold]pre-flight[/] (generator recipe and cost):", highlight=False)
    for line in plan_lines(plan):
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def run_plan_for(corpus: Corpus, path: Path, fmt: str | None, site_config: Path | None) -> RunPlan:
    """The run plan of the corpus at ``path`` under ``site_config`` (or the defaults), priced
    as ``synthesize`` would: on the training split the split stage will cut from it (the
    site's own validation and test files where site.toml names them)."""
    from site_agent.adapt.recipe import this_machine
    from site_agent.config import build_site_config, load_site_config
    from site_agent.plan.estimate import plan_run
    from site_agent.stages.preflight import run_preflight

    if site_config is not None:
        config = load_site_config(site_config)
    else:
        config = build_site_config({"site_id": "validate", "corpus": {"path": str(path)}})
    same = config.corpus.path.resolve() == path.resolve()
    fmt = fmt if fmt is not None else (config.corpus.format if same else None)
    config = config.model_copy(
        update={"corpus": config.corpus.model_copy(update={"path": path.resolve(), "format": fmt})}
    )
    plan = run_preflight(config, gold=corpus)
    return plan if plan is not None else plan_run(config, corpus, this_machine())


def register(app: typer.Typer) -> None:
    @app.command()
    def validate(
        corpus: Annotated[Path, typer.Argument(help="Corpus file or folder (format detected).")],
        fmt: Annotated[
            str | None, typer.Option("--format", help="jsonl | brat | conll | datasets")
        ] = None,
        language: Annotated[
            str | None,
            typer.Option(help="Snowball language for lexical diversity (e.g. spanish, sv)."),
        ] = None,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Also write the diagnostics as JSON here.")
        ] = None,
        site_config: Annotated[
            Path | None,
            typer.Option("--site-config", help="site.toml for the pre-flight recipe."),
        ] = None,
    ) -> None:
        """Validate a gold corpus; exit non-zero with the list of problems if it is invalid."""
        from shared.metrics.diagnostics import corpus_diagnostics
        from shared.metrics.tables import diagnostics_table, label_table

        console = Console()
        try:
            loaded = require_documents(read_corpus(corpus, fmt), corpus)
        except CorpusFormatError as exc:
            print_problems(exc, Console(stderr=True))
            raise typer.Exit(exc.exit_code) from None
        diagnostics = corpus_diagnostics(loaded, language=language)
        console.print(
            f"[green]valid[/]: {escape(str(corpus))} - {len(loaded)} documents, "
            f"{len(loaded.labels)} labels",
            highlight=False,
        )
        console.print(diagnostics_table(diagnostics))
        console.print(label_table(diagnostics))
        print_preflight(preflight(loaded, annotator_settings(site_config)), console)
        print_plan(run_plan_for(loaded, corpus, fmt, site_config), console)
        if json_out is not None:
            stamped = diagnostics.model_copy(
                update={
                    "provenance": make_provenance(
                        source=str(corpus), source_sha256=sha256_tree(corpus)
                    )
                }
            )
            atomic_write_text(json_out, stamped.model_dump_json(indent=2) + "\n")
            console.print(f"diagnostics written to {json_out}", highlight=False, markup=False)
