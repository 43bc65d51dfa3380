"""``site-agent evaluate --gold G --pred P``: every foundation metric, printed and as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from shared.atomic import atomic_write_text


def register(app: typer.Typer) -> None:
    @app.command()
    def evaluate(
        gold: Annotated[Path, typer.Option(help="Gold corpus (format detected).")],
        pred: Annotated[Path, typer.Option(help="Predicted corpus on the same documents.")],
        mapping: Annotated[
            Path | None, typer.Option(help="Label mapping (TOML/JSON) to a coarse scheme.")
        ] = None,
        out: Annotated[Path | None, typer.Option(help="Write the full report as JSON.")] = None,
        bootstrap: Annotated[
            int, typer.Option(min=0, help="Bootstrap resamples over documents (0: none).")
        ] = 1000,
        seed: Annotated[int, typer.Option(help="Bootstrap random seed.")] = 0,
        language: Annotated[
            str | None, typer.Option(help="Snowball language for lexical diversity.")
        ] = None,
        gold_format: Annotated[str | None, typer.Option(help="Format of --gold.")] = None,
        pred_format: Annotated[str | None, typer.Option(help="Format of --pred.")] = None,
    ) -> None:
        """Score predictions against gold: token, exact/overlap span, leakage, diagnostics."""
        from shared.corpus_io import read_corpus
        from shared.label_mapping import load_label_mapping
        from shared.metrics import BootstrapSettings
        from shared.metrics import evaluate as evaluate_corpora
        from shared.metrics.tables import leakage_table, per_label_table, summary_table
        from shared.provenance import sha256_tree

        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed) if bootstrap else None
        report = evaluate_corpora(
            read_corpus(gold, gold_format),
            read_corpus(pred, pred_format),
            load_label_mapping(mapping) if mapping else None,
            settings,
            language=language,
        )
        stamped = report.provenance.model_copy(
            update={"source": str(pred), "parents": (sha256_tree(gold), sha256_tree(pred))}
        )
        report = report.model_copy(update={"provenance": stamped})
        console = Console()
        console.print(summary_table(report))
        console.print(leakage_table(report))
        console.print(per_label_table(report.overlap))
        if out is not None:
            atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
            console.print(f"report written to {out}", highlight=False, markup=False)
