"""``run_audit``: measure, filter, decide, and write the audited corpus with its verdict.

The phases read as the protocol they implement:

1. measure every enabled measure on the full synthetic corpus;
2. drop documents, filter by filter, in the policy's order;
3. report every figure before and after filtering and judge each policy rule on them;
4. write ``synthetic.audited.jsonl`` (the kept documents), then ``audit.json`` (whose hash
   field covers that file) and ``audit.md``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from protocol import Corpus
from protocol.audit import AuditReport, CanarySet, DroppedDocument, MembershipCanarySet
from shared.corpus_io import write_corpus
from shared.errors import ConfigError
from shared.provenance import config_digest, make_provenance, sha256_file, tool_version
from site_agent.audit.canary_exposure import CONTEXT_N
from site_agent.audit.context import AuditContext, ExtraSurface, Unit
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.registry import FilterInput, MeasureResult, filters, measures
from site_agent.audit.report import write_report
from site_agent.audit.rules import evaluate, flatten
from site_agent.privacy.digest import corpus_sha256

AUDITED_CORPUS = "synthetic.audited.jsonl"
log = logging.getLogger(__name__)


def needed_tables(context: AuditContext) -> set[tuple[Unit, int]]:
    """The n-gram tables the enabled measures and filters will ask for (to build them
    up front, in parallel; anything missed here is still built on demand)."""
    policy = context.policy
    tables: set[tuple[Unit, int]] = set()
    if "ngram_recall" in policy.measures:
        tables |= {(u, n) for u in context.units for n in policy.ngram_recall.sizes}
    if "sensitive_ngram" in policy.filters.enabled:
        tables |= {(u, policy.filters.sensitive_ngram_n) for u in context.units}
    if "nearest_real" in policy.measures:
        sizes = {*policy.nearest_real.rouge_sizes, policy.filters.rouge_n}
        tables |= {("words", n) for n in sizes}
    if context.canaries is not None and "canaries" in policy.measures:
        tables.add(("words", CONTEXT_N))
    return tables


def _measure(
    context: AuditContext, timings: dict[str, float], workers: int
) -> dict[str, MeasureResult]:
    registry = measures()
    unknown = [m for m in context.policy.measures if m not in registry]
    if unknown:
        raise ConfigError(f"unknown measure(s) {unknown}; known: {sorted(registry)}")
    started = time.perf_counter()
    log.info("audit: tokenising and collecting n-grams")
    context.warm_up(needed_tables(context), workers)
    timings["tokens_and_ngrams"] = round(time.perf_counter() - started, 3)

    def run(name: str) -> MeasureResult | None:
        begun = time.perf_counter()
        log.info("audit: measuring %s", name)
        result = registry[name](context)
        timings[name] = round(time.perf_counter() - begun, 3)
        return result

    with ThreadPoolExecutor(max(workers, 1)) as pool:
        done = dict(
            zip(context.policy.measures, pool.map(run, context.policy.measures), strict=True)
        )
    return {name: result for name, result in done.items() if result is not None}


@dataclass(frozen=True)
class FilterOutcome:
    """Which documents are kept, and why the others were dropped."""

    kept: np.ndarray
    dropped_by_reason: dict[str, int]
    flagged_by_reason: dict[str, int]
    marks: dict[str, np.ndarray]  # filter name -> every document it marked

    def dropped_documents(self, corpus: Corpus) -> tuple[DroppedDocument, ...]:
        """Every dropped document with the filters that marked it (the first one dropped it)."""
        return tuple(
            DroppedDocument(
                id=doc.id, reasons=tuple(name for name, m in self.marks.items() if m[index])
            )
            for index, doc in enumerate(corpus.documents)
            if not self.kept[index]
        )


def apply_filters(context: AuditContext, results: dict[str, MeasureResult]) -> FilterOutcome:
    """Run the policy's filters in order: kept mask, counts per reason, marks per filter."""
    registry = filters()
    unknown = [name for name in context.policy.filters.enabled if name not in registry]
    if unknown:
        raise ConfigError(
            f"unknown filter(s) {unknown} in policy.filters.enabled; known: {sorted(registry)}"
        )
    alive = np.ones(len(context.synthetic.documents), dtype=bool)
    dropped: dict[str, int] = {}
    flagged: dict[str, int] = {}
    marks: dict[str, np.ndarray] = {}
    for name in context.policy.filters.enabled:
        raw = np.asarray(registry[name](FilterInput(context, results, alive.copy())), dtype=bool)
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
    synthetic: Corpus,
    policy: AuditPolicy,
    out_dir: Path,
    *,
    extra_pii_surfaces: Iterable[ExtraSurface] = (),
    canaries: CanarySet | None = None,
    membership_canaries: MembershipCanarySet | None = None,
    tokenizer: Any = None,
    workers: int = 1,
) -> AuditReport:
    """Audit ``synthetic`` against the ``real`` training corpus; write and return the report.

    ``tokenizer`` is a Hugging Face fast tokenizer or the folder of one (loaded lazily);
    ``extra_pii_surfaces`` are strings (or ``(label, string)`` pairs) searched like gold PII;
    ``canaries`` and ``membership_canaries`` are the site's private canary records;
    ``workers`` threads share the work (the results do not depend on it; on the 2-core
    development box two threads were no faster, as much of the work holds the GIL).
    """
    extra = tuple(extra_pii_surfaces)
    context = AuditContext(
        real,
        synthetic,
        policy,
        tokenizer=tokenizer,
        extra_pii_surfaces=extra,
        canaries=canaries,
        membership_canaries=membership_canaries,
    )
    timings: dict[str, float] = {}
    results = _measure(context, timings, workers)
    started = time.perf_counter()
    outcome = apply_filters(context, results)
    kept = outcome.kept
    timings["filters"] = round(time.perf_counter() - started, 3)
    before = _figures(results, np.ones(len(kept), dtype=bool))
    after = _figures(results, kept)
    rules, skipped = evaluate(policy.rules, {"before": flatten(before), "after": flatten(after)})
    digest = audit_settings_digest(policy, tokenizer, extra, canaries, membership_canaries)
    input_sha = corpus_sha256(synthetic)
    audited = Corpus.model_construct(  # the documents were validated with the input corpus
        documents=tuple(d for d, keep in zip(synthetic.documents, kept, strict=True) if keep),
        labels=synthetic.labels,
        provenance=make_provenance(
            source=AUDITED_CORPUS,
            source_sha256=input_sha,
            config_digest=digest,
            parents=(input_sha,),
            notes={"stage": "audit", "policy": policy.name},
        ),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    write_corpus(audited, out_dir / AUDITED_CORPUS, "jsonl")
    report = AuditReport(
        tool_version=tool_version(),
        config_digest=digest,
        real_corpus_sha256=corpus_sha256(real),
        input_corpus_sha256=input_sha,
        audited_corpus_sha256=sha256_file(out_dir / AUDITED_CORPUS),
        n_input_documents=len(synthetic.documents),
        n_kept_documents=int(kept.sum()),
        dropped_by_reason=outcome.dropped_by_reason,
        flagged_by_reason=outcome.flagged_by_reason,
        dropped_documents=outcome.dropped_documents(synthetic),
        measures={name: {"before": before[name], "after": after[name]} for name in before},
        rules=tuple(rules),
        skipped_rules=tuple(skipped),
        policy_name=policy.name,
        policy=policy.model_dump(mode="json"),
        audited_corpus_file=AUDITED_CORPUS,
        timings_s=timings,
        passed=all(r.passed for r in rules),
    )
    write_report(report, out_dir)
    return report
