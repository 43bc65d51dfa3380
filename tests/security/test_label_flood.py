"""Issue 50: one bundle with 1,000 labels (and no label mapping) is excluded alone.

Before: the coordinator accepted it, the run's label space became the union of every corpus's
labels, and each honest site's evaluation policy refused the FedAvg and cross-site
instructions (``max_labels_exceeded``): one site denied the run to all. Now the verifier caps
a corpus's labels (``max-labels``, the policy's default), the flooding bundle is excluded at
collect, and the honest sites train FedAvg and score every model.
"""

from __future__ import annotations

from typing import Any

import pytest
from flwr.app import Message, RecordDict

from coordinator.server_app import run_federation
from coordinator.settings import FederationSettings
from protocol import Corpus, Document, Span
from protocol.rounds import FederationReport
from shared import wire
from site_agent.client_app import app as client_app
from tests.bundles import collect_reply, raw_received
from tests.coordinator.conftest import make_world, node_configs
from tests.security.hostile import HostileGrid, replace_corpus

HONEST = ["site-a", "site-b"]
FLOODER = "flooder"
N_LABELS = 1_000


def flood_corpus() -> Corpus:
    """Fifty notes that together carry 1,000 distinct labels."""
    documents = []
    for d in range(50):
        text = " ".join(f"w{d}x{i}" for i in range(20))
        spans, start = [], 0
        for i, word in enumerate(text.split(" ")):
            spans.append(Span(start=start, end=start + len(word), label=f"L{d * 20 + i}"))
            start += len(word) + 1
        documents.append(Document(id=f"d{d}", text=text, spans=tuple(spans)))
    return Corpus(documents=tuple(documents))


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory) -> FederationReport:
    from site_agent.models.tiny import tiny_encoder
    from tests.template_sites import demo_corpus

    root = tmp_path_factory.mktemp("flood")
    names = [*HONEST, FLOODER]
    texts = [d.text for s in HONEST for d in demo_corpus(s, 10, 0, "v").documents]
    base = tiny_encoder(root / "base", texts)
    world = make_world(root, base, names, set())
    site = world.sites[FLOODER]
    bundle = next((site.site_dir / "outbox").glob("*/"))
    key = site.site_dir / "keys" / "signing.key"
    replace_corpus(bundle, flood_corpus(), key)
    assert len(flood_corpus().labels) == N_LABELS

    def send_flood(message: Message, _: Message | None) -> RecordDict | None:
        if message.metadata.message_type != wire.COLLECT:
            return None
        reply: Any = collect_reply(raw_received(bundle), message, key)
        return reply

    configs = node_configs(world)
    node = next(n for n, c in configs.items() if c["site-id"] == FLOODER)
    settings = FederationSettings(
        registry=world.registry,
        base_model=base,
        output_dir=root / "out",
        mapping=None,
        fedavg_rounds=1,
        train_epochs=1,
        train_min_steps=0,
        learning_rate=1e-3,
        batch_size=8,
        bootstrap=0,
    )
    return run_federation(HostileGrid(client_app, configs, {node: send_flood}), settings)


def test_the_flooding_bundle_is_excluded_alone(flooded: FederationReport) -> None:
    excluded = {(e.site_id, e.phase, e.reason) for e in flooded.exclusions}
    assert (FLOODER, "collect", "over_limit") in excluded
    assert not {e for e in excluded if e[0] in HONEST}, excluded
    detail = next(e.detail for e in flooded.exclusions if e.site_id == FLOODER)
    assert f"{N_LABELS} labels, over the cap of 256 labels" in detail


def test_the_honest_sites_still_train_fedavg_and_score_every_model(
    flooded: FederationReport,
) -> None:
    assert {b.site_id for b in flooded.bundles} == set(HONEST)
    fedavg = next(m for m in flooded.models if m.kind == "fedavg")
    assert set(fedavg.trained_on) == set(HONEST)
    assert len(flooded.labels) < 256
    for model in flooded.models:
        for site in HONEST:
            cell = flooded.cell(model.name, site)
            assert cell is not None and cell.metrics is not None, (model.name, site, cell)
