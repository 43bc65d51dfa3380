"""Phase 4, cross-site validation: every model goes to every site; metrics come back.

Each site gets one message holding every model; it scores each on its held-out test split and
also scores its own gold-trained annotator (the baseline, which never leaves the site).
"""

from __future__ import annotations

from flwr.app import ConfigRecord, RecordDict
from flwr.serverapp import Grid

from coordinator import wire
from coordinator.aggregate import BuiltModel
from coordinator.messaging import exchange
from coordinator.run_state import RunState
from coordinator.transport import pack_model_dir
from protocol.rounds import CrossSiteCell, ModelMetrics


def evaluation_content(
    models: list[BuiltModel], state: RunState, labels: tuple[str, ...]
) -> RecordDict:
    content = RecordDict()
    for model in models:
        weights, files = pack_model_dir(model.model_dir)
        content[wire.MODEL_PREFIX + model.info.name] = weights
        content[wire.MODEL_FILES_PREFIX + model.info.name] = files
    content["config"] = ConfigRecord(
        {
            "models": [m.info.name for m in models] or [""],
            # Exported site encoders tag in their site's labels: the site maps their output.
            "mapped-models": [m.info.name for m in models if m.info.kind == "export"] or [""],
            "labels": list(labels),
            "mapping": state.mapping.model_dump_json() if state.mapping else "",
            "bootstrap": state.settings.bootstrap,
            "seed": state.settings.seed,
        }
    )
    return content


def read_cell(content: RecordDict, name: str, site: str) -> CrossSiteCell:
    """The metrics of model ``name`` at ``site``, or the code the site sent instead."""
    metrics = content.metric_records.get(wire.METRICS_PREFIX + name)
    if metrics is not None:
        flat = {k: float(v) for k, v in metrics.items()}  # type: ignore[arg-type]
        return CrossSiteCell(model=name, site_id=site, metrics=ModelMetrics.from_flat(flat))
    error = content.config_records.get(f"{wire.ERROR}:{name}")
    code = str(error.get("code")) if error is not None else "missing_result"
    return CrossSiteCell(model=name, site_id=site, error=code)


def cross_site(
    grid: Grid, state: RunState, models: list[BuiltModel], labels: tuple[str, ...]
) -> tuple[list[CrossSiteCell], list[CrossSiteCell]]:
    """The models x sites matrix and the per-site baselines (missing cells carry a reason)."""
    content = evaluation_content(models, state, labels)
    replies = exchange(
        grid,
        {n: content for n in state.sites},
        wire.CROSS_SITE,
        "cross_site",
        state.settings.reply_timeout,
    )
    matrix, baselines = [], []
    for node, reply in sorted(replies.items()):
        site = state.site_of(node)
        if reply.content is None:
            state.note_failure(reply, "cross_site", site)
            reason = reply.error or "no_reply"
            matrix += [CrossSiteCell(model=m.info.name, site_id=site, error=reason) for m in models]
            baselines.append(CrossSiteCell(model=wire.BASELINE, site_id=site, error=reason))
            continue
        matrix += [read_cell(reply.content, m.info.name, site) for m in models]
        baselines.append(read_cell(reply.content, wire.BASELINE, site))
    return matrix, baselines
