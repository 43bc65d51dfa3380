"""What the enabled measures and filters need of the real side, decided from the policy in
one place: the n-gram tables every chunk of synthetic notes is looked up in, which of them are
counted over the corpus or flag notes, and what ROUGE-N needs (:class:`RealPlan`)."""

from __future__ import annotations

from site_agent.audit.canary_exposure import CONTEXT_N
from site_agent.audit.context import AuditContext, RealPlan, Table
from site_agent.audit.nearest_real import rouge_sizes
from site_agent.audit.ngram_recall import counted_tables as recall_tables


def counted_tables(context: AuditContext) -> set[Table]:
    """The tables whose per-n-gram counts the figures read."""
    policy = context.policy
    tables: set[Table] = set()
    if "ngram_recall" in policy.measures:
        tables |= recall_tables(context)
    if context.canaries is not None and "canaries" in policy.measures:
        tables.add(("words", CONTEXT_N))
    return tables


def flagged_tables(context: AuditContext) -> set[Table]:
    """The tables whose identifying n-grams drop a note (the sensitive n-gram filter)."""
    filters_ = context.policy.filters
    if "sensitive_ngram" not in filters_.enabled:
        return set()
    return {(u, filters_.sensitive_ngram_n) for u in context.units}


def needed_tables(context: AuditContext) -> set[Table]:
    """The n-gram tables the enabled measures and filters look every chunk up in."""
    tables = counted_tables(context) | flagged_tables(context)
    if "nearest_real" in context.policy.measures:
        tables |= {("words", n) for n in rouge_sizes(context.policy)}
    return tables


def real_plan(context: AuditContext) -> RealPlan:
    """What the enabled measures and filters read of the real side (built before any chunk)."""
    policy = context.policy
    nearest = "nearest_real" in policy.measures
    identifying = flagged_tables(context)
    if "ngram_recall" in policy.measures:
        identifying |= recall_tables(context)
    return RealPlan(
        tables=frozenset(needed_tables(context)),
        identifying=frozenset(identifying),
        counts=frozenset(rouge_sizes(policy) if nearest else ()),
        prefix=(policy.filters.rouge_n, policy.filters.rouge_threshold) if nearest else None,
    )
