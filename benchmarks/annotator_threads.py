"""Threads an annotator gets after a busy stage in the same process, and what they cost.

An experiment or ``site-agent synthesize`` runs its stages one after another in one process.
This script does the same on an otherwise idle machine: a stage that keeps every core busy
(a two-thread matrix loop, as LoRA adaptation or generation does), then:

1. the thread count each rule picks right after it: the 1-minute load average's
   (``cores - round(load)``, the annotator's rule before ``shared/threads.py``) and the
   :class:`shared.threads.ThreadBudget`'s (other processes' CPU time only);
2. the annotator's training time on MEDDOCAN notes at each thread count, side by side in this
   run (the same notes, settings and seed; best of ``--repeats``).

    python benchmarks/annotator_threads.py                      # 16 notes, 2 epochs, e5-small
    python benchmarks/annotator_threads.py --notes 8 --busy 65  # quicker

Run it on an idle machine: another job on the cores changes both rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks.annotator import DEFAULT_DATA  # noqa: E402  (where ../shared's MEDDOCAN is)


def busy_stage(seconds: float, threads: int) -> None:
    """Keep ``threads`` cores busy for ``seconds`` in this process."""
    import torch

    torch.set_num_threads(threads)
    matrix = torch.randn(768, 768)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        matrix @ matrix


def load_average_rule() -> int:
    """The annotator's thread count before shared/threads.py: cores minus the 1-minute load."""
    from shared.threads import cpu_count

    return max(1, cpu_count() - round(os.getloadavg()[0]))


def train_seconds(notes: int, epochs: int, threads: int, model: str, data: Path) -> float:
    """Training seconds (encoding and saving left out) of the annotator on ``threads``."""
    from ner.train import train_annotator
    from protocol.annotator import AnnotatorSettings
    from shared.corpus_io import read_corpus
    from site_agent.annotator.encoder import resolve_backbone

    gold = read_corpus(data / "train.jsonl", "jsonl")
    train = gold.model_copy(update={"documents": gold.documents[:notes]})
    settings = AnnotatorSettings(
        epochs=epochs, min_steps=0, batch_size=8, num_threads=threads, patience=0
    )
    with tempfile.TemporaryDirectory() as folder:
        backbone = resolve_backbone(model)
        result = train_annotator(train, None, backbone, settings, Path(folder) / "annotator")
    return float(result.record.timings["train_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--notes", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--busy", type=float, default=75.0, help="seconds of the busy stage")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    from transformers.utils import logging

    from shared.threads import ThreadBudget, cpu_count

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    console = Console()
    cores = cpu_count()
    budget = ThreadBudget()
    with console.status(f"busy stage: {cores} threads for {args.busy:.0f} s"):
        busy_stage(args.busy, cores)
    picks = Table(title=f"threads picked right after a {args.busy:.0f} s busy stage, same process")
    for column in ("rule", "1-min load", "threads"):
        picks.add_column(column)
    load = os.getloadavg()[0]
    picks.add_row("load average (before)", f"{load:.2f}", str(load_average_rule()))
    picks.add_row("ThreadBudget (now)", f"{load:.2f}", str(budget.threads()))
    console.print(picks)
    counts = sorted({1, cores})
    best = {t: float("inf") for t in counts}
    for _ in range(args.repeats):
        for threads in counts:
            with console.status(f"training on {threads} thread(s)"):
                seconds = train_seconds(args.notes, args.epochs, threads, args.model, args.data)
            best[threads] = min(best[threads], seconds)
    table = Table(
        title=f"{args.model}: {args.notes} MEDDOCAN notes, {args.epochs} epochs, batch 8 "
        f"(best of {args.repeats})"
    )
    for column in ("threads", "train seconds", "vs 1 thread"):
        table.add_column(column)
    for threads in counts:
        table.add_row(str(threads), f"{best[threads]:.1f}", f"{best[1] / best[threads]:.2f}x")
    console.print(table)


if __name__ == "__main__":
    main()
