"""``site-agent validate CORPUS``: check a corpus against the contract and print diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from shared.corpus_io import read_corpus


def register(app: typer.Typer) -> None:
    @app.command()
    def validate(
        corpus: Annotated[Path, typer.Argument(help="Corpus file or folder (format detected).")],
        fmt: Annotated[
            str | None, typer.Option("--format", help="jsonl | brat | conll | datasets")
        ] = None,
    ) -> None:
        """Validate a gold corpus; exit non-zero with the list of problems if it is invalid."""
        loaded = read_corpus(corpus, fmt)
        Console().print(f"[green]valid[/]: {len(loaded)} documents, {len(loaded.labels)} labels")
