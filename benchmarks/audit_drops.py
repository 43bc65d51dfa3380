"""Why the audit's sensitive n-gram filter drops synthetic notes, by rule, unit and label.

    python benchmarks/audit_drops.py runs/site
    python benchmarks/audit_drops.py runs/site --audit-again /tmp/reaudit

Reads a finished site run's real notes (the training and validation splits: what the audit
compares with) and its annotated synthetic notes, and prints, for each rule of
``[audit.policy.filters] sensitive_ngram_identifiers`` ("all", "specific") and each unit
(words, the generator's tokens), how many synthetic notes share an identifying real n-gram,
and by the label of the real identifier the shared n-gram holds. The audit's own report
counts notes per reason only; this says which identifiers are behind them. Uses the filter's
default n and share. ``--audit-again OUT`` also runs the audit stage's own function on the
run's annotated notes under today's default policy into OUT (the run's work dir is only
read) and prints what it keeps. Not a test: a diagnostic of one run.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from protocol import Document
from site_agent.privacy.grams import identifying_columns, iter_ngrams, real_grams, window_runs
from site_agent.privacy.specific import identifier_flags
from site_agent.privacy.subword import Unit, unit_stream

RULES = ("all", "specific")


@dataclass(frozen=True)
class Attribution:
    """For one rule and unit: the synthetic notes sharing an identifying real n-gram, and
    per label of a real identifier such an n-gram holds, the notes it was shared by."""

    rule: str
    unit: str
    notes: frozenset[int]
    by_label: dict[str, frozenset[int]]


def attribute(
    real: Sequence[Document],
    synthetic: Sequence[Document],
    n: int,
    share: float,
    unit: Unit = "words",
    tokenizer: Any = None,
) -> list[Attribution]:
    """One :class:`Attribution` per rule, for ``unit``."""
    stream = unit_stream(real, unit, tokenizer, with_pii=True)
    table = real_grams(stream, n)
    labels = [s.label for d in real for s in d.spans]  # the stream's span numbering
    out = []
    synth = unit_stream(synthetic, unit, tokenizer, with_pii=False)
    for rule in RULES:
        chosen = identifying_columns(table, stream, share, identifier_flags(real, rule))
        held: dict[int, set[str]] = defaultdict(set)  # column -> labels it holds the share of
        occurrences = np.flatnonzero(chosen[table.real_cols])
        for part in window_runs(stream, table.real_starts[occurrences], n):
            cols = table.real_cols[occurrences[part.rows]]
            for column, span, reached in zip(cols, part.span, part.share >= share, strict=True):
                held[int(column)].update(labels[s] for s in span[reached & (span >= 0)])
        columns = np.flatnonzero(chosen)
        hashes = table.vocab[columns]  # the vocabulary is sorted, so is this
        notes: set[int] = set()
        by_label: dict[str, set[int]] = defaultdict(set)
        for piece in iter_ngrams(synth, n):
            if not len(hashes):
                break
            where = np.minimum(np.searchsorted(hashes, piece.hashes), len(hashes) - 1)
            found = hashes[where] == piece.hashes
            for column, doc in zip(columns[where[found]], piece.docs[found], strict=True):
                notes.add(int(doc))
                for label in held[int(column)]:
                    by_label[label].add(int(doc))
        out.append(
            Attribution(
                rule, unit, frozenset(notes), {k: frozenset(v) for k, v in by_label.items()}
            )
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "work_dir", type=Path, help="a site run's work dir (after its annotate stage)"
    )
    parser.add_argument("--audit-again", type=Path, help="audit the notes again into this folder")
    args = parser.parse_args(argv)
    from shared.corpus_io import read_corpus
    from site_agent.audit.policy import AuditPolicy
    from site_agent.models import resolve_model
    from site_agent.pipeline.stage import read_record
    from site_agent.privacy.subword import load_tokenizer
    from site_agent.stages.pipeline import folder_of, stage_artifact

    work = args.work_dir
    synthetic_path = stage_artifact(work, "annotate", "corpus")
    split = folder_of(work, "split")
    if synthetic_path is None or not (split / "train.jsonl").is_file():
        print(
            f"{work}: no finished annotate stage; fix: run site-agent synthesize", file=sys.stderr
        )
        return 2
    real = list(read_corpus(split / "train.jsonl").documents)
    if (split / "validation.jsonl").is_file():
        real += read_corpus(split / "validation.jsonl").documents
    synthetic = read_corpus(synthetic_path).documents
    adapt = read_record(folder_of(work, "adapt"))
    base = adapt.summary.get("base_model") if adapt is not None else None
    filters = AuditPolicy().filters
    tokenizer = load_tokenizer(str(resolve_model(base))) if isinstance(base, str) else None
    units: tuple[Unit, ...] = ("words", "tokens") if tokenizer is not None else ("words",)
    n, share = filters.sensitive_ngram_n, filters.sensitive_ngram_min_share
    rows = [a for unit in units for a in attribute(real, synthetic, n, share, unit, tokenizer)]
    table = Table(
        title=f"{len(synthetic)} synthetic notes sharing an identifying real "
        f"{filters.sensitive_ngram_n}-gram (share {filters.sensitive_ngram_min_share})"
    )
    table.add_column("rule")
    table.add_column("unit")
    table.add_column("notes", justify="right")
    table.add_column("by the label of the real identifier (notes)")
    for row in rows:
        top = sorted(row.by_label.items(), key=lambda item: -len(item[1]))
        table.add_row(
            row.rule, row.unit, str(len(row.notes)),
            ", ".join(f"{label} {len(docs)}" for label, docs in top) or "-",
        )  # fmt: skip
    Console().print(table)
    if args.audit_again is not None:
        _audit_again(work, args.audit_again, base)
    return 0


def _audit_again(work: Path, out: Path, base: object) -> None:
    """The audit stage's function on the run's own inputs, under the default policy."""
    from site_agent.audit.settings import AuditSettings
    from site_agent.models import resolve_model
    from site_agent.stages.audit import audit_synthetic_notes
    from site_agent.stages.pipeline import folder_of, stage_artifact

    private = folder_of(work, "pseudonymise")
    inputs = {
        "split.train": folder_of(work, "split") / "train.jsonl",
        "split.validation": folder_of(work, "split") / "validation.jsonl",
        "pseudonymise.surrogates": private / "surrogates.private.jsonl",
        "pseudonymise.canaries": private / "canaries.private.json",
        "pseudonymise.membership_canaries": private / "membership_canaries.private.json",
        "annotate.corpus": stage_artifact(work, "annotate", "corpus"),
    }
    found = {k: v for k, v in inputs.items() if v is not None and v.is_file()}
    tokenizer = str(resolve_model(str(base))) if isinstance(base, str) else ""
    report, _ = audit_synthetic_notes(found, AuditSettings(), tokenizer, out, None)
    dropped = {k: v for k, v in report.dropped_by_reason.items() if v}
    print(
        f"audited again (default policy): passed {report.passed}, kept "
        f"{report.n_kept_documents} of {report.n_input_documents}; dropped {dropped}; {out}"
    )


if __name__ == "__main__":
    sys.exit(main())
