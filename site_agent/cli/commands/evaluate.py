"""``site-agent evaluate --gold G --pred P``: every foundation metric, printed and as JSON.

``site-agent evaluate --gold G --presidio MODEL_DIR``: the encoder folder run bare and inside
a Presidio analyzer (``site_agent/presidio``), both scored on ``G`` in Presidio's entity names,
the same tables printed for each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from protocol.evaluation import EvaluationReport
from shared.atomic import atomic_write_text
from shared.errors import UsageError


def _print_report(console: Console, report: EvaluationReport, title: str = "") -> None:
    """The summary, leakage and per-label tables; ``title`` names the pipeline scored."""
    from shared.metrics.tables import leakage_table, per_label_table, summary_table

    tables = (summary_table(report), leakage_table(report), per_label_table(report.overlap))
    for table in tables:
        if title:
            table.title = f"{title}: {table.title}"
        console.print(table)


def register(app: typer.Typer) -> None:
    @app.command()
    def evaluate(
        gold: Annotated[Path, typer.Option(help="Gold corpus (format detected).")],
        pred: Annotated[
            Path | None, typer.Option(help="Predicted corpus on the same documents.")
        ] = None,
        presidio: Annotated[
            Path | None,
            typer.Option(
                help="Encoder folder to score bare and inside a Presidio analyzer "
                '(needs pip install -e ".[presidio]"); instead of --pred.'
            ),
        ] = None,
        presidio_language: Annotated[
            str, typer.Option(help="Language code the Presidio analyzer runs under.")
        ] = "en",
        presidio_builtins: Annotated[
            bool,
            typer.Option(help="Add Presidio's predefined pattern recognizers to the encoder."),
        ] = False,
        presidio_threshold: Annotated[
            float,
            typer.Option(
                min=0.0, max=1.0, help="Lowest score a Presidio result of the encoder keeps."
            ),
        ] = 0.3,
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
        from shared.metrics import BootstrapSettings

        if (pred is None) == (presidio is None):
            raise UsageError(
                "evaluate needs exactly one of --pred (a predicted corpus) and --presidio (an "
                "encoder folder); fix: give one of them"
            )
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed) if bootstrap else None
        console = Console()
        if presidio is not None:
            from site_agent.presidio.scoring import score_pipelines

            reports = score_pipelines(
                presidio,
                read_corpus(gold, gold_format),
                language=presidio_language,
                builtin_recognizers=presidio_builtins,
                threshold=presidio_threshold,
                bootstrap=settings,
            )
            for name, scored in reports.items():
                _print_report(console, scored, name)
            if out is not None:
                dumped = {name: r.model_dump(mode="json") for name, r in reports.items()}
                atomic_write_text(out, json.dumps(dumped, indent=2) + "\n")
                console.print(f"reports written to {out}", highlight=False, markup=False)
            return
        assert pred is not None
        from shared.label_mapping import load_label_mapping
        from shared.metrics import evaluate as evaluate_corpora
        from shared.provenance import sha256_tree

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
        _print_report(console, report)
        if out is not None:
            atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
            console.print(f"report written to {out}", highlight=False, markup=False)
