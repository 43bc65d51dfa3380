"""Phase 4, cross-site validation: every model goes to every site; metrics come back.

Each site gets the models in messages of at most ``cross-site-batch-mb`` (real encoders are
hundreds of megabytes; one message holding them all would have to fit in every process's
memory at once, while each message starts a ClientApp process) and scores them on its
held-out test split; the first message also asks for its own gold-trained annotator's scores
(the baseline, which never leaves the site).
"""

from __future__ import annotations

from pathlib import Path

from flwr.app import RecordDict
from flwr.serverapp import Grid

from coordinator.aggregate.built_model import BuiltModel
from coordinator.given_models import tags_in
from coordinator.messaging import Reply, exchange
from coordinator.run_state import RunState
from protocol.rounds import BASELINE, CrossSiteCell, CrossSiteInstruction, CrossSiteReply
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


def read_reply(reply: Reply, state: RunState, site: str) -> CrossSiteReply | str:
    """The site's validated answer, or the reason every one of its cells is empty."""
    if reply.content is None:
        state.note_failure(reply, "cross_site", site)
        return reply.error or "no_reply"
    try:
        return wire.unpack(reply.content, CrossSiteReply)
    except wire.WireError as exc:
        state.exclude(site, "cross_site", "site_error", str(exc))
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
        cells, base = matrix_from_replies(replies, state, names, baseline=i == 0)
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
    replies: dict[int, Reply], state: RunState, names: list[str], baseline: bool = True
) -> tuple[list[CrossSiteCell], list[CrossSiteCell]]:
    """Every site's cells, in site order: its metrics per model, the codes it sent, or the
    reason its reply is missing (the site is then excluded with that reason)."""
    matrix, baselines = [], []
    for node, reply in sorted(replies.items()):
        site = state.site_of(node)
        answer = read_reply(reply, state, site)
        matrix += site_cells(answer, names, site)
        if baseline:
            baselines += site_cells(answer, [BASELINE], site)
    return matrix, baselines
