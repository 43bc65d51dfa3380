"""``run_audit``: measure, filter, decide, and write the audited corpus with its verdict.

The phases read as the protocol they implement:

1. build the real side once (token streams, n-gram tables, BM25, PII surfaces, LSH keys);
2. stream the synthetic corpus through every enabled measure, ``chunk_documents`` notes at a
   time, keeping only small per-note results; finish the measures (the notes of
   near-duplicate candidate pairs are read again and compared exactly);
3. drop documents, filter by filter, in the policy's order;
4. report every figure before filtering; read the synthetic corpus again to write the kept
   notes to ``synthetic.audited.jsonl`` (atomically) and to subtract the dropped ones from
   the corpus-level counts; report every figure after filtering and judge each policy rule;
5. write ``audit.json`` (whose hash field covers that file) and ``audit.md``.

So the peak memory is the real side's indexes, one chunk, and the per-note results; the
results do not depend on the chunk size.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from protocol import Corpus
from protocol.audit import AuditReport, CanarySet, DroppedDocument, MembershipCanarySet
from shared.atomic import atomic_open
from shared.corpus_io.sidecar import file_sidecar, write_corpus_sidecar
from shared.errors import ConfigError
from shared.judge import report_verdict
from shared.provenance import config_digest, make_provenance, sha256_file, tool_version
from site_agent.audit.context import AuditContext, ExtraSurface, SyntheticChunk
from site_agent.audit.document_ids import DocumentIds
from site_agent.audit.measure import Measured, Timer, measure_corpus
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.registry import CountsOverNotes, FilterInput, MeasureResult, filters
from site_agent.audit.report import write_report
from site_agent.audit.rules import check_rule_figures, evaluate, flatten
from site_agent.audit.settings import DEFAULT_CHUNK_DOCUMENTS
from site_agent.audit.source import SyntheticSource, synthetic_source
from site_agent.privacy.digest import corpus_sha256

AUDITED_CORPUS = "synthetic.audited.jsonl"


@dataclass(frozen=True)
class FilterOutcome:
    """Which documents are kept, and why the others were dropped."""

    kept: np.ndarray
    dropped_by_reason: dict[str, int]
    flagged_by_reason: dict[str, int]
    marks: dict[str, np.ndarray]  # filter name -> every document it marked

    def dropped_documents(self, ids: DocumentIds) -> tuple[DroppedDocument, ...]:
        """Every dropped document with the filters that marked it (the first one dropped it)."""
        return tuple(
            DroppedDocument(
                id=ids[index], reasons=tuple(name for name, m in self.marks.items() if m[index])
            )
            for index in np.flatnonzero(~self.kept).tolist()
        )


def apply_filters(context: AuditContext, measured: Measured) -> FilterOutcome:
    """Run the policy's filters in order: kept mask, counts per reason, marks per filter."""
    registry = filters()
    unknown = [name for name in context.policy.filters.enabled if name not in registry]
    if unknown:
        raise ConfigError(
            f"unknown filter(s) {unknown} in policy.filters.enabled; known: {sorted(registry)}"
        )
    alive = np.ones(measured.n_documents, dtype=bool)
    dropped: dict[str, int] = {}
    flagged: dict[str, int] = {}
    marks: dict[str, np.ndarray] = {}
    for name in context.policy.filters.enabled:
        given = FilterInput(context, measured.results, measured.found, alive.copy())
        raw = np.asarray(registry[name](given), dtype=bool)
        marked = raw & alive
        marks[name] = raw
        flagged[name] = int(raw.sum())
        dropped[name] = int(marked.sum())
        alive &= ~marked
    return FilterOutcome(alive, dropped, flagged, marks)


def _figures(results: dict[str, MeasureResult], kept: np.ndarray) -> dict[str, Any]:
    figures: dict[str, Any] = {name: r.figures(kept) for name, r in results.items()}
    figures["corpus"] = {"input_documents": len(kept), "kept_documents": int(kept.sum())}
    return figures


def write_kept(
    context: AuditContext,
    source: SyntheticSource,
    outcome: FilterOutcome,
    measured: Measured,
    path: Path,
    chunk_documents: int,
    workers: int,
) -> None:
    """Write the kept notes to ``path`` as they are read (atomically: the file appears whole
    or not at all), and subtract the dropped notes from the corpus-level counts."""
    dropped = ~outcome.kept
    counting = [r for r in measured.results.values() if isinstance(r, CountsOverNotes)]
    with atomic_open(path, "w") as handle:
        for piece in source.write_kept(chunk_documents, outcome.kept, handle):
            if not (counting or measured.found.counted):
                continue
            gone = SyntheticChunk(context, piece.documents, piece.positions)
            gone.warm_up(measured.found.counted, workers)
            measured.found.subtract(gone, dropped)
            for result in counting:
                result.subtract(gone, dropped)


def audit_settings_digest(
    policy: AuditPolicy,
    tokenizer: Any,
    extra: tuple[ExtraSurface, ...],
    canaries: CanarySet | None,
    membership_canaries: MembershipCanarySet | None = None,
) -> str:
    """``config_digest`` of ``audit.json``: policy, tokenizer, extra PII surfaces, canaries
    (the export gate recomputes it from the site's own settings and files)."""
    extra_digest = hashlib.sha256(repr(sorted(map(repr, extra))).encode()).hexdigest()
    settings: dict[str, Any] = {
        "policy": policy.model_dump(mode="json"),
        "tokenizer": None
        if tokenizer is None
        else str(getattr(tokenizer, "name_or_path", tokenizer)),
        "extra_pii_surfaces_sha256": extra_digest,
        "canaries_sha256": None if canaries is None else config_digest(canaries),
    }
    if membership_canaries is not None:
        settings["membership_canaries_sha256"] = config_digest(membership_canaries)
    return config_digest(settings)


def run_audit(
    real: Corpus,
    synthetic: Corpus | str | os.PathLike[str],
    policy: AuditPolicy,
    out_dir: Path,
    *,
    extra_pii_surfaces: Iterable[ExtraSurface] = (),
    canaries: CanarySet | None = None,
    membership_canaries: MembershipCanarySet | None = None,
    tokenizer: Any = None,
    workers: int = 1,
    chunk_documents: int = DEFAULT_CHUNK_DOCUMENTS,
    synthetic_format: str | None = None,
) -> AuditReport:
    """Audit ``synthetic`` against the ``real`` training corpus; write and return the report.

    ``synthetic`` is a corpus in memory or a corpus file (a JSONL file is read a chunk at a
    time and never held whole; ``synthetic_format`` names another format, which is read
    whole); ``chunk_documents`` synthetic notes are measured at a time (the results do not
    depend on it; the memory does);
    ``tokenizer`` is a Hugging Face fast tokenizer or the folder of one (loaded lazily);
    ``extra_pii_surfaces`` are strings (or ``(label, string)`` pairs) searched like gold PII;
    ``canaries`` and ``membership_canaries`` are the site's private canary records;
    ``workers`` threads share the work (the results do not depend on it; on the 2-core
    development box two threads were no faster, as much of the work holds the GIL).
    """
    if chunk_documents < 1:
        raise ConfigError(f"chunk_documents must be >= 1, got {chunk_documents}")
    check_rule_figures(policy.rules)  # before anything is measured
    extra = tuple(extra_pii_surfaces)
    source = synthetic_source(synthetic, synthetic_format)
    context = AuditContext(
        real,
        policy,
        tokenizer=tokenizer,
        extra_pii_surfaces=extra,
        canaries=canaries,
        membership_canaries=membership_canaries,
    )
    timer = Timer()
    measured = measure_corpus(context, source, chunk_documents, timer, workers)
    started = time.perf_counter()
    outcome = apply_filters(context, measured)
    kept = outcome.kept
    timer.add("filters", started)
    before = _figures(measured.results, np.ones(len(kept), dtype=bool))
    digest = audit_settings_digest(policy, tokenizer, extra, canaries, membership_canaries)
    provenance = make_provenance(
        source=AUDITED_CORPUS,
        source_sha256=measured.sha256,
        config_digest=digest,
        parents=(measured.sha256,),
        notes={"stage": "audit", "policy": policy.name},
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    audited = out_dir / AUDITED_CORPUS
    write_kept(context, source, outcome, measured, audited, chunk_documents, workers)
    write_corpus_sidecar(file_sidecar(audited), measured.labels, provenance)
    timer.add("write_and_subtract", started)
    after = _figures(measured.results, kept)
    rules, skipped = evaluate(policy.rules, {"before": flatten(before), "after": flatten(after)})
    report = AuditReport(
        tool_version=tool_version(),
        config_digest=digest,
        real_corpus_sha256=corpus_sha256(real),
        input_corpus_sha256=measured.sha256,
        audited_corpus_sha256=sha256_file(out_dir / AUDITED_CORPUS),
        n_input_documents=measured.n_documents,
        n_kept_documents=int(kept.sum()),
        dropped_by_reason=outcome.dropped_by_reason,
        flagged_by_reason=outcome.flagged_by_reason,
        dropped_documents=outcome.dropped_documents(context.synthetic_ids),
        measures={name: {"before": before[name], "after": after[name]} for name in before},
        rules=tuple(rules),
        skipped_rules=tuple(skipped),
        policy_name=policy.name,
        policy=policy.model_dump(mode="json"),
        audited_corpus_file=AUDITED_CORPUS,
        timings_s=timer.rounded(),
        passed=report_verdict(rules).passed,
    )
    write_report(report, out_dir)
    return report
