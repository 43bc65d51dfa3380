"""Time the full privacy audit at scale: 10,000 real and 100,000 synthetic MEDDOCAN-like notes.

    python benchmarks/audit_scale.py              # full scale (goal: <= 60 s, <= 4 GB RSS, 2 cores)
    python benchmarks/audit_scale.py --scale 0.05 # 500 real, 5,000 synthetic
    python benchmarks/audit_scale.py --full       # 100,000 real, 1,000,000 synthetic
    python benchmarks/audit_scale.py --project 0.02 0.05  # reduced runs, fitted to --full

The audit reads the synthetic JSONL file itself, ``--chunk-documents`` notes at a time
(default: the audit's, 5,000), so its time includes reading and validating the synthetic
notes; ``read_s`` is the real corpus only. ``--full`` (goal: <= 10 min, <= 8 GB on 2 cores)
first checks that the peak RSS projected below fits in the machine's available memory, and
stops naming the projection when it does not. ``--project`` runs the audit at two reduced
scales in chunks of a quarter of the smaller synthetic corpus and fits time and peak RSS
per stage as a + b x notes to the full scale, naming the stage that will dominate (the next
bottleneck); a third run, of the larger scale in one chunk, gives the memory per note of a
chunk, which takes the fitted RSS to the full run's chunk size.

The corpora are generated (seeded) once into ``--cache`` as JSONL: notes of ~420 words with a
MEDDOCAN-like header of gold PII spans, from a Zipfian vocabulary; the synthetic corpus holds
planted leaks (copied passages with PII, exact copies of real notes) and near/exact
duplicates. The audit runs in a fresh process so its peak RSS is its own. A naive reference
(ROUGE-5 recall over every real/synthetic pair, pure Python) is timed on a subset and
extrapolated to all pairs; the table prints both and their ratio.

Streaming the synthetic notes (2026-11-27, the shared 2-core box under load ~3.8 from other
jobs, back to back with the commit before it on the same cache; benchmarks/README.md has
the tables): ``--project 0.02 0.05`` fits 275 s CPU (synthetic reading included) and
10.5 GB against 248 s (reading excluded; 164 s more) and 40.9 GB before. The fit is an
upper estimate: at these scales the fixed-size working buffers (slices of 4M n-grams or 4M
characters) are not yet full and grow with the corpus as if per note.

Earlier, before streaming, measured on the shared 2-core development box at full scale
(load ~3-6 from other jobs): run_audit 39.1 s wall, 38.0 s CPU, peak RSS 2.6 GB with one
thread (two threads gave no gain there and 3.0 GB), of which the PII echo (Aho-Corasick over
the rewritten text) 7.8 s; the naive all-pairs ROUGE-5 would take ~360 hours (~33,000x).
Counting identifying n-grams (the share of an identifier each holds) for the filter and the
gate, measured back to back with the commit before it on the same cache, a LoRA run sharing
the cores: 57.3 s wall, 47.3 s CPU against 51.3 s and 46.6 s; peak RSS 2.89 GB both; the same
81,180 notes kept. After in_pii was derived from the span numbering (one pass over the
spans instead of two), on an idle machine: 41.4 s wall, 41.3 s CPU, 2.89 GB, 81,180 kept.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protocol import Corpus, Document, Provenance, Span  # noqa: E402
from shared.atomic import atomic_open  # noqa: E402
from shared.corpus_io import read_corpus, write_corpus  # noqa: E402
from shared.corpus_io.jsonl import document_line, iter_jsonl  # noqa: E402
from shared.corpus_io.sidecar import file_sidecar, write_corpus_sidecar  # noqa: E402
from site_agent.audit.settings import DEFAULT_CHUNK_DOCUMENTS  # noqa: E402

_SYLLABLE_TEXT = (
    "ca de ño lá mi to re su pa ni go ve ra lo ce ti bu fe ma sa ro que gui al es in or ún"
)
SYLLABLES = _SYLLABLE_TEXT.split()


def _words(rng: np.random.Generator, count: int, capital: bool = False) -> list[str]:
    out: set[str] = set()
    while len(out) < count:
        parts = rng.choice(SYLLABLES, size=rng.integers(2, 5))
        word = "".join(parts)
        out.add(word.capitalize() if capital else word)
    return sorted(out)


class NoteMaker:
    """Seeded MEDDOCAN-like notes: a header of gold PII spans and a Zipfian body."""

    def __init__(self, seed: int, words: int = 390) -> None:
        self.rng = np.random.default_rng(seed)
        vocab = _words(np.random.default_rng(0), 40_000)
        self.vocab = np.array(
            [w + ("." if i % 17 == 0 else "") for i, w in enumerate(vocab)], dtype=object
        )
        ranks = np.arange(1, len(self.vocab) + 1)
        self.cdf = np.cumsum(1 / (ranks + 2.7) ** 1.05)
        self.cdf /= self.cdf[-1]
        names = np.random.default_rng(1)
        self.first = _words(names, 300, capital=True)
        self.last = _words(names, 1000, capital=True)
        self.cities = _words(names, 200, capital=True)
        self.length = words

    def body(self) -> str:
        n = int(self.rng.normal(self.length, 80))
        ids = np.searchsorted(self.cdf, self.rng.random(max(n, 30)))
        return " ".join(self.vocab[ids].tolist())

    def note(self, doc_id: str) -> Document:
        r = self.rng
        draws = iter(r.random(8).tolist())

        def pick(options: list[str]) -> str:
            return options[int(next(draws) * len(options))]

        pieces: list[str | tuple[str, str]] = [
            "Datos del paciente.\nNombre: ",
            (pick(self.first), "NOMBRE_SUJETO_ASISTENCIA"),
            ".\nApellidos: ",
            (f"{pick(self.last)} {pick(self.last)}", "NOMBRE_SUJETO_ASISTENCIA"),
            ".\nNHC: ",
            (str(r.integers(10**6, 10**7)), "ID_SUJETO_ASISTENCIA"),
            ".\nDomicilio: ",
            (f"Calle {pick(self.last)} {r.integers(1, 200)}", "CALLE"),
            ".\nLocalidad/ Provincia: ",
            (pick(self.cities), "TERRITORIO"),
            ".\nFecha de Ingreso: ",
            (f"{r.integers(1, 29):02d}/{r.integers(1, 13):02d}/{r.integers(1990, 2024)}", "FECHAS"),
            ".\nMédico: ",
            (
                f"{pick(self.first)} {pick(self.last)} {pick(self.last)}",
                "NOMBRE_PERSONAL_SANITARIO",
            ),
            " NºCol: ",
            (f"28 28 {r.integers(10000, 99999)}", "ID_TITULACION_PERSONAL_SANITARIO"),
            ".\nInforme clínico del paciente: ",
            self.body(),
        ]
        text, spans = "", []
        for piece in pieces:
            if isinstance(piece, tuple):
                spans.append(Span(start=len(text), end=len(text) + len(piece[0]), label=piece[1]))
                piece = piece[0]
            text += piece
        return Document(id=doc_id, text=text, spans=tuple(spans))


def synthetic_notes(real: Corpus, n: int, seed: int) -> Iterator[Document]:
    """Mostly new notes; ~1% copy a real passage with PII, ~0.5% copy a real note, ~1.5% dups
    (of an earlier note: only the texts are kept, so a million notes are written as made)."""
    maker, rng = NoteMaker(seed), np.random.default_rng(seed + 1)
    texts: list[str] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.01:
            source = real.documents[rng.integers(len(real))].text
            cut = rng.integers(0, max(1, len(source) - 600))
            text = maker.body()[:800] + " " + source[cut : cut + 600] + " " + maker.body()[:800]
        elif roll < 0.015:
            text = real.documents[rng.integers(len(real))].text
        elif roll < 0.03 and texts:
            words = texts[rng.integers(len(texts))].split(" ")
            words[rng.integers(len(words))] = "cambio"
            text = " ".join(words)
        else:
            note = maker.note(f"s{i}")
            texts.append(note.text)
            yield note
            continue
        texts.append(text)
        yield Document(id=f"s{i}", text=text)


def write_notes(notes: Iterable[Document], path: Path) -> None:
    """Write notes as ``write_corpus`` would, one at a time, with the labels they use."""
    labels: set[str] = set()
    with atomic_open(path, "w") as handle:
        for note in notes:
            labels |= {s.label for s in note.spans}
            handle.write(document_line(note))
    write_corpus_sidecar(file_sidecar(path), sorted(labels), Provenance())


def make_corpora(scale: float, cache: Path) -> tuple[Path, Path]:
    n_real, n_synth = max(int(10_000 * scale), 10), max(int(100_000 * scale), 10)
    real_path, synth_path = cache / f"real_{n_real}.jsonl", cache / f"synthetic_{n_synth}.jsonl"
    if not (real_path.exists() and synth_path.exists()):
        started = time.perf_counter()
        maker = NoteMaker(seed=7)
        real = Corpus(documents=tuple(maker.note(f"r{i}") for i in range(n_real)))
        write_corpus(real, real_path)
        write_notes(synthetic_notes(real, n_synth, seed=8), synth_path)
        took = time.perf_counter() - started
        print(f"generated {n_real} real + {n_synth} synthetic notes in {took:.0f} s")
    return real_path, synth_path


def worker(real_path: Path, synth_path: Path, out: Path, workers: int, chunk: int) -> None:
    """Run in a fresh process: read the real corpus, run the audit (which reads the synthetic
    file a chunk of notes at a time), print timings as JSON."""
    from site_agent.audit.corpus_audit import run_audit
    from site_agent.audit.policy import AuditPolicy

    started = time.perf_counter()
    real = read_corpus(real_path)
    loaded, cpu = time.perf_counter(), time.process_time()
    report = run_audit(real, synth_path, AuditPolicy(), out, workers=workers, chunk_documents=chunk)
    done, cpu = time.perf_counter(), time.process_time() - cpu
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(
        json.dumps(
            {
                "read_s": loaded - started,
                "audit_s": done - loaded,
                "cpu_s": cpu,
                "rss_gb": rss_gb,
                "stages": report.timings_s,
                "kept": report.n_kept_documents,
                "dropped": report.dropped_by_reason,
                "passed": report.passed,
            }
        )
    )


def naive_reference(
    real_path: Path, synth_path: Path, n_real: int, n_synth: int
) -> tuple[float, int]:
    """Seconds for ROUGE-5 over all pairs of a small subset (pure Python), and its pair count."""
    from site_agent.privacy.reference import naive_max_rouge

    real = _first(real_path, n_real)
    synth = _first(synth_path, n_synth)  # the 1M-note file is 4 GB: read only the subset
    started = time.perf_counter()
    naive_max_rouge(real, synth, 5)
    return time.perf_counter() - started, n_real * n_synth


def _first(path: Path, n: int) -> list[Document]:
    return [doc for _, doc in itertools.takewhile(lambda item: item[0] < n, iter_jsonl(path))]


FULL_SCALE = 10.0  # 100k real x 1M synthetic
PROJECTED_FULL_GB = 10.5  # --project 0.02 0.05 (docstring), an upper estimate


def audit_in_subprocess(
    real_path: Path, synth_path: Path, out: Path, workers: int, chunk: int
) -> dict[str, Any]:
    """The worker's JSON: the audit run in a fresh process, so its peak RSS is its own."""
    command = [
        sys.executable, __file__, "--workers", str(workers), "--chunk-documents", str(chunk),
        "--worker", str(real_path), str(synth_path), str(out),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def run_scale(
    scale: float, cache: Path, workers: int, chunk: int | None
) -> tuple[int, int, dict[str, Any]]:
    """(real notes, synthetic notes, the worker's JSON) of one audit run at ``scale``, in
    chunks of ``chunk`` synthetic notes (``None``: all in one chunk)."""
    cache.mkdir(parents=True, exist_ok=True)
    real_path, synth_path = make_corpora(scale, cache)
    n_real = sum(1 for _ in real_path.open())
    n_synth = sum(1 for _ in synth_path.open())
    out = cache / "out"
    return (
        n_real,
        n_synth,
        audit_in_subprocess(real_path, synth_path, out, workers, chunk or n_synth),
    )


def available_gb() -> float:
    """MemAvailable of /proc/meminfo in GB (inf where unreadable)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return float("inf")


def fit(points: list[tuple[int, float]], at: float) -> float:
    """a + b x ``at`` through two (x, y) points."""
    (x0, y0), (x1, y1) = points
    slope = (y1 - y0) / (x1 - x0)
    return y0 + slope * (at - x0)


def project(scales: list[float], cache: Path, workers: int, chunk: int) -> None:
    """Fit time and peak RSS of two reduced runs as a + b x notes to the full scale.

    Both reduced runs stream the synthetic notes in chunks of a quarter of the smaller
    synthetic corpus, so their fit is what grows with the corpora (the real side's indexes,
    the per-note results). A third run, of the larger scale in one chunk, gives the working
    set per note of a chunk, which takes the fitted RSS to the full run's ``chunk``.
    """
    full_notes = int(10_000 * FULL_SCALE) + int(100_000 * FULL_SCALE)
    small = max(1, min(int(100_000 * s) for s in scales) // 4)
    runs = [run_scale(s, cache, workers, small) for s in scales]
    _, n_synth, whole = run_scale(max(scales), cache, workers, None)
    stages = sorted(set(runs[0][2]["stages"]) & set(runs[1][2]["stages"]))
    notes = [(r + n, result) for r, n, result in runs]
    rows = [
        (
            "notes (real + synthetic)",
            " / ".join(f"{n:,}" for n, _ in notes) + f" -> {full_notes:,}",
        ),
        ("synthetic notes per chunk (reduced runs)", f"{small:,}"),
    ]
    projected = {}
    for key in ("read_s", "audit_s", "cpu_s", "rss_gb"):
        points = [(n, float(r[key])) for n, r in notes]
        projected[key] = fit(points, full_notes)
        measured = " / ".join(f"{y:.2f}" for _, y in points)
        rows.append((key, f"{measured} -> {projected[key]:.1f}"))
    per_note = max(0.0, (whole["rss_gb"] - notes[-1][1]["rss_gb"]) / max(n_synth - small, 1))
    rows.append(
        (
            "rss_gb, larger scale in one chunk",
            f"{whole['rss_gb']:.2f} ({per_note * 1024**2:.0f} KB per chunk note)",
        )
    )
    rows.append(
        (
            f"rss_gb at full scale, chunks of {chunk:,}",
            f"{projected['rss_gb'] + per_note * (chunk - small):.1f}",
        )
    )
    for stage in stages:
        points = [(n, float(r["stages"][stage])) for n, r in notes]
        projected[stage] = fit(points, full_notes)
        rows.append(
            (
                f"  stage {stage} (s)",
                f"{' / '.join(f'{y:.2f}' for _, y in points)} -> {projected[stage]:.0f}",
            )
        )
    worst = max(stages, key=lambda k: projected[k])
    rows.append(("next bottleneck (largest projected stage)", worst))
    rows.append(("available memory now", f"{available_gb():.1f} GB"))
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))


def full_fits() -> None:
    """Stop before a --full run whose projected peak RSS exceeds the available memory."""
    if available_gb() < PROJECTED_FULL_GB:
        sys.exit(
            f"--full: projected peak RSS {PROJECTED_FULL_GB:.1f} GB (--project 0.02 0.05, an "
            f"upper estimate) exceeds the {available_gb():.1f} GB available. Fix: run "
            "--project on this machine for its own projection, or a machine with that much "
            "memory."
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of 10k real / 100k synthetic"
    )
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "audit_scale")
    parser.add_argument(
        "--naive-pairs", type=int, default=20, help="synthetic docs in the naive subset"
    )
    parser.add_argument("--workers", type=int, default=1, help="threads for the audit")
    parser.add_argument(
        "--chunk-documents",
        type=int,
        default=DEFAULT_CHUNK_DOCUMENTS,
        help="synthetic notes the audit measures at a time",
    )
    parser.add_argument("--full", action="store_true", help="1,000,000 x 100,000 (scale 10)")
    parser.add_argument("--project", nargs=2, type=float, help="two reduced scales to fit")
    parser.add_argument("--worker", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        real_path, synth_path, out = args.worker
        worker(real_path, synth_path, out, args.workers, args.chunk_documents)
        return
    if args.project:
        project(list(args.project), args.cache, args.workers, args.chunk_documents)
        return
    if args.full:
        full_fits()
        args.scale = FULL_SCALE
    args.cache.mkdir(parents=True, exist_ok=True)
    real_path, synth_path = make_corpora(args.scale, args.cache)
    n_real = sum(1 for _ in real_path.open())
    n_synth = sum(1 for _ in synth_path.open())
    result = audit_in_subprocess(
        real_path, synth_path, args.cache / "out", args.workers, args.chunk_documents
    )
    # kept before the naive reference runs, so a long run's figures survive whatever follows
    (args.cache / f"audit-result-{args.scale:g}.json").write_text(json.dumps(result, indent=2))
    naive_s, naive_pairs = naive_reference(
        real_path, synth_path, min(200, n_real), args.naive_pairs
    )
    naive_all = naive_s / naive_pairs * n_real * n_synth
    rows = [
        ("real / synthetic documents", f"{n_real:,} / {n_synth:,}"),
        ("read the real corpus (JSONL + validation)", f"{result['read_s']:.1f} s"),
        *((f"  audit stage: {k}", f"{v:.1f} s") for k, v in result["stages"].items()),
        ("full audit (run_audit), wall", f"{result['audit_s']:.1f} s   (goal <= 60 s at scale 1)"),
        ("full audit, CPU time (all threads)", f"{result['cpu_s']:.1f} s"),
        ("threads", str(args.workers)),
        ("peak RSS of the audit process", f"{result['rss_gb']:.2f} GB (goal <= 4 GB)"),
        ("kept / dropped", f"{result['kept']:,} / {sum(result['dropped'].values()):,}"),
        (f"naive ROUGE-5, {naive_pairs:,} pairs", f"{naive_s:.1f} s"),
        ("naive, all pairs (extrapolated)", f"{naive_all / 3600:.1f} h"),
        ("speed-up of the fast audit", f"{naive_all / result['audit_s']:,.0f}x"),
    ]
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))


if __name__ == "__main__":
    main()
