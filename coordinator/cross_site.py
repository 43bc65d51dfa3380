"""Phase 4, cross-site validation: every model goes to every site; metrics come back.

Each site gets the models in messages of at most ``cross-site-batch-mb`` (real encoders are
hundreds of megabytes; one message holding them all would have to fit in every process's
memory at once, while each message starts a ClientApp process) and scores them on its
held-out test split; the first message also asks for its own gold-trained annotator's scores
(the baseline, which never leaves the site).

Replies are untrusted: the payload is capped before it is parsed, anything reading it raises
excludes the site, and figures out of range (NaN, infinite, outside [0, 1], an inverted interval,
more documents than the site's test split) are refused per model
(``invalid_metrics``) instead of entering the report.
"""

from __future__ import annotations

import math
from pathlib import Path

from flwr.app import RecordDict
from flwr.serverapp import Grid

from coordinator.aggregate.built_model import BuiltModel
from coordinator.given_models import tags_in
from coordinator.messaging import Reply, exchange
from coordinator.replies import refusal, unpack_reply
from coordinator.run_state import RunState
from protocol.rounds import (
    BASELINE,
    CrossSiteCell,
    CrossSiteInstruction,
    CrossSiteReply,
    Estimate,
    ModelMetrics,
)
from shared import wire


def needs_mapping(model: BuiltModel, labels: tuple[str, ...]) -> bool:
    if model.info.kind == "export":
        return True
    return model.info.kind == "given" and not tags_in(labels, model.model_dir)


def instruction(
    models: list[BuiltModel], state: RunState, labels: tuple[str, ...], baseline: bool = True
) -> CrossSiteInstruction:
    return CrossSiteInstruction(
        include_baseline=baseline,
        models=tuple(m.info.name for m in models),
        # Exported site encoders tag in their site's labels: the site maps their output, and
        # that of any given model that does not tag in the shared labels.
        mapped_models=tuple(m.info.name for m in models if needs_mapping(m, labels)),
        labels=labels,
        mapping=state.mapping,
        bootstrap=state.settings.bootstrap,
        seed=state.settings.seed,
    )


def evaluation_content(
    models: list[BuiltModel], state: RunState, labels: tuple[str, ...], baseline: bool = True
) -> RecordDict:
    records: dict[str, wire.Record] = {}
    for model in models:
        records |= wire.model_records(model.info.name, model.model_dir)
    return wire.pack(instruction(models, state, labels, baseline), records)


def site_cells(answer: CrossSiteReply | str, names: list[str], site: str) -> list[CrossSiteCell]:
    """One cell per model name: its metrics, the code the site sent, ``missing_result``, or,
    when ``answer`` is a reason instead of a reply, that reason in every cell."""
    if isinstance(answer, str):
        return [CrossSiteCell(model=name, site_id=site, error=answer) for name in names]
    return [
        CrossSiteCell(
            model=name,
            site_id=site,
            metrics=answer.metrics.get(name),
            error=None if name in answer.metrics else answer.errors.get(name, "missing_result"),
        )
        for name in names
    ]


def _estimate_problem(name: str, estimate: Estimate) -> str | None:
    values = (estimate.value, estimate.low, estimate.high)
    if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values):
        return f"{name} {values} is not within [0, 1]"
    if estimate.low > estimate.high:  # a percentile interval may miss its point, never invert
        return f"{name}: the interval [{estimate.low}, {estimate.high}] is inverted"
    return None


def metrics_problem(metrics: ModelMetrics, n_test: int) -> str | None:
    """Why ``metrics`` cannot be what a site computed on its test split, or None."""
    for name in ("token_f1", "span_overlap_f1", "document_leakage"):
        problem = _estimate_problem(name, getattr(metrics, name))
        if problem:
            return problem
    if not 0 <= metrics.n_documents <= n_test:
        return f"{metrics.n_documents} documents scored, the test split holds {n_test}"
    if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in metrics.label_recall.values()):
        return "a per-label recall is not within [0, 1]"
    return None


def checked_reply(
    answer: CrossSiteReply, state: RunState, site: str, labels: tuple[str, ...]
) -> CrossSiteReply:
    """``answer`` without the figures that are out of range (each becomes
    ``invalid_metrics`` in its cell and an exclusion naming the model)."""
    n_test = state.roll[site].test_split.n_documents if site in state.roll else 0
    metrics, errors = dict(answer.metrics), dict(answer.errors)
    for name, figures in answer.metrics.items():
        problem = metrics_problem(figures, n_test)
        if problem is not None:
            del metrics[name]
            errors[name] = "evaluation_failed"
            state.exclude(site, "cross_site", "invalid_metrics", f"{name[:80]}: {problem}")
        elif labels:  # recall of labels nobody asked for is not reported
            recall = {k: v for k, v in figures.label_recall.items() if k in labels}
            metrics[name] = figures.model_copy(update={"label_recall": recall})
    state.evaluation_bounds[site] = answer.evaluation_bound
    if answer.privacy is not None:
        state.privacy[site] = answer.privacy
    return CrossSiteReply(
        metrics=metrics,
        errors=errors,
        evaluation_bound=answer.evaluation_bound,
        privacy=answer.privacy,
    )


def read_reply(
    reply: Reply, state: RunState, site: str, labels: tuple[str, ...] = ()
) -> CrossSiteReply | str:
    """The site's validated answer, or the reason every one of its cells is empty."""
    if reply.content is None:
        state.note_failure(reply, "cross_site", site)
        return reply.error or "no_reply"
    try:
        answer = unpack_reply(reply.content, CrossSiteReply, state.settings.limits)
        return checked_reply(answer, state, site, labels)
    except Exception as exc:  # one site's reply never ends the phase
        state.exclude(site, "cross_site", *refusal(exc))
        return "malformed_reply"


def cross_site(
    grid: Grid, state: RunState, models: list[BuiltModel], labels: tuple[str, ...]
) -> tuple[list[CrossSiteCell], list[CrossSiteCell]]:
    """The models x sites matrix and the per-site baselines (missing cells carry a reason).

    A site that stops answering is excluded and asked no more."""
    timeout = state.settings.reply_timeout
    matrix, baselines = [], []
    limit = state.settings.cross_site_batch_mb * 1024 * 1024
    for i, batch in enumerate(batches(models, limit)):
        content = evaluation_content(batch, state, labels, baseline=i == 0)
        replies = exchange(
            grid, dict.fromkeys(state.sites, content), wire.CROSS_SITE, f"cross_site-{i}", timeout
        )
        names = [m.info.name for m in batch]
        cells, base = matrix_from_replies(replies, state, names, baseline=i == 0, labels=labels)
        matrix += cells
        baselines += base
    return matrix, baselines


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def batches(models: list[BuiltModel], limit_bytes: int) -> list[list[BuiltModel]]:
    """Consecutive models grouped up to ``limit_bytes`` each (a larger model goes alone);
    one empty batch when there is no model, so the baselines are still asked for."""
    grouped: list[list[BuiltModel]] = []
    size = 0
    for model in models:
        weight = folder_bytes(model.model_dir)
        if not grouped or (grouped[-1] and size + weight > limit_bytes):
            grouped.append([])
            size = 0
        grouped[-1].append(model)
        size += weight
    return grouped or [[]]


def matrix_from_replies(
    replies: dict[int, Reply],
    state: RunState,
    names: list[str],
    baseline: bool = True,
    labels: tuple[str, ...] = (),
) -> tuple[list[CrossSiteCell], list[CrossSiteCell]]:
    """Every site's cells, in site order: its metrics per model, the codes it sent, or the
    reason its reply is missing (the site is then excluded with that reason)."""
    matrix, baselines = [], []
    for node, reply in sorted(replies.items()):
        site = state.site_of(node)
        answer = read_reply(reply, state, site, labels)
        matrix += site_cells(answer, names, site)
        if baseline:
            baselines += site_cells(answer, [BASELINE], site)
    return matrix, baselines
