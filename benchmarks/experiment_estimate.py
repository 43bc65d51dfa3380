"""How long an experiment file will take on CPU, before running it: a table per stage.

    python benchmarks/experiment_estimate.py studies/specs/meddocan.toml
    python benchmarks/experiment_estimate.py FILE.toml --slowdown 6.7   # a busy machine
    python benchmarks/experiment_estimate.py FILE.toml --measured OUT  # beside a finished run

Counts the work each distinct stage does (stages that runs share are counted once, as the
content-addressed store computes them once) and prices it with unit costs measured on an idle
2-core CPU (README benchmarks): multilingual-e5-small fine-tuning 544 s/epoch over MEDDOCAN
train (1,886 chunks of 128 words), Gemma 3 270M LoRA 5.82 s/step (batch 4 x 256 tokens) and
165 generated tokens/s. Chunks per note and the split sizes come from the site's corpus.
Sharing is worked out from the knobs each stage depends on, the way the store's keys are.
The unit costs are two-thread costs. meddocan.toml measured 1.62 h of stages against an
estimate of 1.70 h; its earlier run measured 3.1 h because its annotators and adapters ran on
one thread (the load-average rule that ``shared/threads.py`` replaced).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ner.recipe import epochs_for
from shared.corpus_io import read_corpus
from site_agent.config import SiteConfig, SiteConfigError
from site_agent.pipeline.stage import read_record
from studies.experiment import Experiment, PlannedRun, corpus_sample, plan_runs
from studies.spec import load_experiment

# e5-small, one training pass over one 128-word chunk at batch 8: the meddocan-core gold
# annotator, 648 steps of 8 chunks in 536 s (2 cores; the full-corpus benchmark's 544 s per
# 1,886-chunk epoch included its evaluation and is 3x this)
TRAIN_S_PER_CHUNK = 536 / (648 * 8)
INFER_S_PER_CHUNK = TRAIN_S_PER_CHUNK / 3  # forward only
SYNTHETIC_CHUNK = 0.5  # a <=96-token synthetic note costs about half a full 128-word chunk
LOAD_S = 15.0  # load the encoder, save its weights
ADAPT_S_PER_STEP = 5.82 * 1.0  # Gemma 3 270M, batch 4 x 256 tokens
GENERATE_TOK_PER_S = 75.0  # meddocan-core: 65 notes x 128 tokens in 112-138 s, load included


def planned_epochs(chunks: float, config: SiteConfig) -> int:
    """Epochs the annotator recipe trains ``chunks`` for (``ner.recipe.epochs_for``)."""
    return epochs_for(chunks, config.annotator.training)


def knob(run: PlannedRun, config: SiteConfig, *prefixes: str) -> tuple[Any, ...]:
    """The run's site.toml overrides under ``prefixes``, as a hashable key."""
    return tuple(
        sorted((k, str(v)) for k, v in run.condition.overrides.items() if k.startswith(prefixes))
    )


def measured(out_dir: Path, run_ids: Iterable[str]) -> dict[str, tuple[int, float]]:
    """Per stage name: the distinct store folders the runs ``run_ids`` of ``out_dir`` link to
    and the seconds their ``stage.json`` records, i.e. what those runs cost with an empty store,
    one stage at a time (stages reused from an earlier invocation count with the time they took
    then). Runs of other files sharing the folder are left out."""
    folders = {
        link.resolve()
        for run_id in run_ids
        for link in (out_dir / "runs" / run_id / "work").glob("*")
    }
    totals: dict[str, tuple[int, float]] = {}
    for folder in sorted(folders):
        record = read_record(folder)
        if record is None or record.status != "completed":
            continue
        count, seconds = totals.get(record.stage, (0, 0.0))
        totals[record.stage] = (count + 1, seconds + record.seconds)
    return totals


def estimate(path: Path, slowdown: float, out_dir: Path | None = None) -> Table:
    spec, site_path = load_experiment(path)
    out = Path("/tmp/experiment-estimate")
    experiment = Experiment(spec, site_path, out, Console(stderr=True))
    if spec.experiment.max_corpus_documents:
        experiment.site = {
            **experiment.site,
            "corpus": corpus_sample(experiment.site, site_path, out, spec.experiment),
        }
    runs = plan_runs(spec)
    first = experiment.config_of(runs[0])
    gold = read_corpus(first.corpus.path, first.corpus.format)
    words = [len(d.text.split()) for d in gold.documents]
    per_note = sum(math.ceil(w / 128) for w in words) / len(words)
    n = len(gold)
    n_test = round(n * first.split.test_fraction)
    n_train = n - n_test - round(n * first.split.validation_fraction)
    work: dict[str, dict[tuple[Any, ...], float]] = defaultdict(dict)
    invalid = 0
    for run in runs:
        config_invalid = False
        try:
            config = experiment.config_of(run)
        except SiteConfigError:
            config_invalid = True  # e.g. a generation mode this checkout lacks: priced as default
            invalid += 1
            plain = run.condition.model_copy(update={"overrides": {}})
            config = experiment.config_of(dataclasses.replace(run, condition=plain))
        c = run.condition
        rep = run.repeat if spec.experiment.repeat_by != "training" else 0
        extra = knob(run, config, "") if config_invalid else ()
        annotator = (c.annotator_fraction, rep, config.annotator.model_dump_json())
        gold_chunks = c.annotator_fraction * n_train * per_note
        work["annotator"][annotator] = (
            LOAD_S + gold_chunks * planned_epochs(gold_chunks, config) * TRAIN_S_PER_CHUNK
        )
        work["evaluate-gold"][annotator] = LOAD_S + n_test * per_note * INFER_S_PER_CHUNK
        # the mode renders the adaptation text (tags, placeholders): its own adapter
        mode = config.generation.mode
        adapt = (c.adapt_fraction, rep, config.adapt.model_dump_json(), mode, extra)
        steps = config.adapt.max_steps or 100
        work["adapt"][adapt] = LOAD_S + (steps * ADAPT_S_PER_STEP if c.adapt_fraction else 0.0)
        generated = (config.generation.amount or 1.0) * n_train
        generate = (*adapt, config.generation.model_dump_json())
        tokens = generated * (config.generation.max_new_tokens or 128)
        work["generate"][generate] = LOAD_S + tokens / GENERATE_TOK_PER_S
        annotate = (*generate, annotator)
        work["annotate"][annotate] = LOAD_S + generated * SYNTHETIC_CHUNK * INFER_S_PER_CHUNK
        real = c.annotator_fraction * n_train
        syn = {
            "synthetic-only": min(generated, c.synthetic_amount * n_train),
            "real-only": 0.0,
            "augmentation": min(
                generated, (c.synthetic_fraction or 0) / (1 - (c.synthetic_fraction or 0)) * real
            ),
            "fixed-n": (1 - (c.real_fraction or 1)) * real,
        }.get(c.regime, 0.0)
        real = {"synthetic-only": 0.0, "fixed-n": (c.real_fraction or 1) * real}.get(c.regime, real)
        chunks = real * per_note + syn * SYNTHETIC_CHUNK
        passes = chunks * planned_epochs(chunks, config)
        if c.regime == "compute-matched":
            passes = (c.steps or 1) * config.annotator.training.batch_size
        train = LOAD_S + passes * TRAIN_S_PER_CHUNK + n_test * per_note * INFER_S_PER_CHUNK
        work["train-evaluate"][(*annotate, c.model_dump_json(), run.repeat)] = train
    table = Table(
        title=f"{path.name}: {len(runs)} runs, {n_train} train notes, {per_note:.2f} chunks/note"
    )
    for column in ("stage", "distinct", "hours (idle 2-core CPU)", f"hours x{slowdown}"):
        table.add_column(column)
    done = measured(out_dir, (r.run_id for r in runs)) if out_dir else {}
    if out_dir:
        table.add_column("measured distinct")
        table.add_column("measured hours")
    total = measured_total = 0.0
    for stage in [*work, *sorted(set(done) - set(work))]:
        seconds = sum(work.get(stage, {}).values())
        total += seconds
        row = [
            stage,
            str(len(work.get(stage, {}))),
            f"{seconds / 3600:.2f}",
            f"{seconds * slowdown / 3600:.2f}",
        ]
        if out_dir:
            count, spent = done.get(stage, (0, 0.0))
            measured_total += spent
            row += [str(count), f"{spent / 3600:.2f}"]
        table.add_row(*row)
    last = ["total", "", f"{total / 3600:.2f}", f"{total * slowdown / 3600:.2f}"]
    table.add_row(*last, *(["", f"{measured_total / 3600:.2f}"] if out_dir else []))
    if invalid:
        table.caption = f"{invalid} runs do not validate here; priced without their overrides"
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--slowdown", type=float, default=1.0, help="busy-machine factor")
    parser.add_argument(
        "--measured", type=Path, help="a finished run's --out folder: its stage times beside"
    )
    args = parser.parse_args()
    Console().print(estimate(args.spec, args.slowdown, args.measured))


if __name__ == "__main__":
    main()
