"""``site-agent annotate train|apply``: the machine annotator on its own, outside the pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

FormatOption = Annotated[str | None, typer.Option("--format", help="Corpus format (detected).")]


def _train(
    train: Path,
    validation: Path | None,
    base_model: str,
    out: Path,
    epochs: int,
    min_recall: float,
    fmt: str | None,
) -> None:
    from ner.train import train_annotator
    from protocol.annotator import AnnotatorSettings
    from shared.corpus_io import read_corpus
    from site_agent.annotator.encoder import resolve_backbone
    from site_agent.annotator.gate import check_annotator_quality

    val = read_corpus(validation, fmt) if validation else None
    settings = AnnotatorSettings(epochs=epochs)
    backbone = resolve_backbone(base_model)
    result = train_annotator(read_corpus(train, fmt), val, backbone, settings, out)
    console = Console()
    for epoch in result.record.epochs:
        scores = f", validation token F1 {epoch.metrics.f1:.3f}" if epoch.metrics else ""
        console.print(f"epoch {epoch.epoch}: loss {epoch.train_loss:.4f}{scores}")
    console.print(f"[green]saved[/] {escape(str(out))} (best epoch {result.record.best_epoch})")
    if result.record.restarts:
        console.print(
            f"[yellow]stalled on O: restarted {result.record.restarts} time(s) with the next seed"
            "[/] (each restart is a whole training run)"
        )
    check_annotator_quality(result.best_metrics, min_recall if val else 0.0, result.record)


def _apply(model: Path, corpus: Path, out: Path, batch_size: int, fmt: str | None) -> None:
    from ner.infer import machine_annotate
    from shared.corpus_io import read_corpus, write_corpus

    annotated = machine_annotate(model, read_corpus(corpus, fmt), batch_size=batch_size)
    write_corpus(annotated, out, "jsonl")
    spans = sum(len(d.spans) for d in annotated.documents)
    Console().print(
        f"[green]annotated[/] {len(annotated)} documents, {spans} spans -> {escape(str(out))}"
    )


def register(app: typer.Typer) -> None:
    annotate = typer.Typer(help="Train the machine annotator, or label a corpus with it.")

    @annotate.command("train")
    def train_command(
        train: Annotated[Path, typer.Option(help="Gold training corpus.")],
        base_model: Annotated[str, typer.Option(help="Registry name, model folder or HF id.")],
        out: Annotated[Path, typer.Option(help="Folder to write the annotator to.")],
        validation: Annotated[
            Path | None, typer.Option(help="Validation corpus (best epoch, quality gate).")
        ] = None,
        epochs: Annotated[int, typer.Option(min=1, help="Training epochs (paper: 6).")] = 6,
        min_recall: Annotated[
            float, typer.Option(min=0.0, max=1.0, help="Fail below this validation recall.")
        ] = 0.0,
        fmt: FormatOption = None,
    ) -> None:
        """Fine-tune an encoder for NER on gold notes (128-word chunks, paper settings)."""
        _train(train, validation, base_model, out, epochs, min_recall, fmt)

    @annotate.command("apply")
    def apply_command(
        model: Annotated[Path, typer.Argument(help="Annotator folder written by `train`.")],
        corpus: Annotated[Path, typer.Argument(help="Corpus to label (its spans are replaced).")],
        out: Annotated[Path, typer.Option(help="Where to write the labelled corpus (JSONL).")],
        batch_size: Annotated[int, typer.Option(min=1, help="Chunks per forward pass.")] = 32,
        fmt: FormatOption = None,
    ) -> None:
        """Machine-annotate a corpus: exact, non-overlapping spans with provenance."""
        _apply(model, corpus, out, batch_size, fmt)

    app.add_typer(annotate, name="annotate")
