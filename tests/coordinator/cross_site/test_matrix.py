"""The models x sites matrix assembled from what the sites sent back, reply by reply."""

from __future__ import annotations

from pathlib import Path

from flwr.app import ConfigRecord, RecordDict

from coordinator.cross_site import matrix_from_replies
from coordinator.messaging import Reply
from protocol.rounds import BASELINE, CrossSiteReply, Estimate, ModelMetrics
from shared import wire
from tests.coordinator.state import run_state

NAMES = ["pooled", "fedavg"]


def metrics(f1: float) -> ModelMetrics:
    est = Estimate(value=f1, low=f1 - 0.1, high=f1 + 0.1)
    return ModelMetrics(
        token_f1=est, span_overlap_f1=est, document_leakage=est, label_recall={}, n_documents=3
    )


def test_cells_hold_metrics_codes_and_the_reason_a_reply_is_missing(tmp_path: Path) -> None:
    state = run_state(tmp_path, {1: "site-a", 2: "site-b", 3: "site-c", 4: "site-d"})
    answered = CrossSiteReply(
        metrics={"pooled": metrics(0.8), BASELINE: metrics(0.9)},
        errors={"fedavg": "model_unpack_failed"},
    )
    garbled = RecordDict({wire.PAYLOAD: ConfigRecord({"json": '{"metrics": 3}'})})
    replies = {
        1: Reply(1, content=wire.pack(answered)),
        2: Reply(2, error="no_reply"),
        3: Reply(3, content=garbled),
        4: Reply(4, content=wire.pack(CrossSiteReply())),
    }
    matrix, baselines = matrix_from_replies(replies, state, NAMES)

    table = {(c.model, c.site_id): (c.metrics, c.error) for c in matrix}
    assert table == {
        ("pooled", "site-a"): (metrics(0.8), None),
        ("fedavg", "site-a"): (None, "model_unpack_failed"),
        ("pooled", "site-b"): (None, "no_reply"),
        ("fedavg", "site-b"): (None, "no_reply"),
        ("pooled", "site-c"): (None, "malformed_reply"),
        ("fedavg", "site-c"): (None, "malformed_reply"),
        ("pooled", "site-d"): (None, "missing_result"),
        ("fedavg", "site-d"): (None, "missing_result"),
    }
    assert [(b.site_id, b.metrics, b.error) for b in baselines] == [
        ("site-a", metrics(0.9), None),
        ("site-b", None, "no_reply"),
        ("site-c", None, "malformed_reply"),
        ("site-d", None, "missing_result"),
    ]
    excluded = {(e.site_id, e.reason) for e in state.exclusions}
    assert excluded == {("site-b", "no_reply"), ("site-c", "site_error")}
    assert 2 not in state.sites  # a site that stopped answering leaves the later phases


def test_models_are_sent_in_batches_under_the_size_limit(tmp_path: Path) -> None:
    from coordinator.aggregate.built_model import BuiltModel
    from coordinator.cross_site import batches
    from protocol.rounds import TrainedModel

    def model(name: str, size: int) -> BuiltModel:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"x" * size)
        info = TrainedModel(name=name, kind="pooled", trained_on=(), n_training_documents=1)
        return BuiltModel(info, folder)

    a, b, big, c = model("a", 40), model("b", 50), model("big", 500), model("c", 10)
    assert batches([a, b, big, c], 100) == [[a, b], [big], [c]]
    assert batches([], 100) == [[]]


def test_a_sites_stated_privacy_spend_reaches_the_report(tmp_path: Path) -> None:
    from coordinator.report.build import site_summaries
    from protocol.rounds import PrivacySpend

    spend = PrivacySpend(
        mechanism="gaussian",
        epsilon_budget=8.0,
        delta=1e-6,
        epsilon_spent=2.0,
        epsilon_left=6.0,
        models_scored=3,
        models_left=45,
        epsilon_per_model=1.04,
        noise_sd=0.1,
    )
    state = run_state(tmp_path, {1: "site-a", 2: "site-b"})
    replies = {
        1: Reply(
            1, content=wire.pack(CrossSiteReply(metrics={"pooled": metrics(0.8)}, privacy=spend))
        ),
        2: Reply(2, content=wire.pack(CrossSiteReply(metrics={"pooled": metrics(0.7)}))),
    }
    matrix_from_replies(replies, state, ("pooled",))
    summaries = {s.site_id: s.privacy for s in site_summaries(state)}
    assert summaries == {"site-a": spend, "site-b": None}
