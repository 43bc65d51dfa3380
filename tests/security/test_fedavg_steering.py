"""One site cannot steer FedAvg: a 100,000-document bundle sending a head-only rewrite.

Three honest demo sites train through the real ClientApp; a fourth node claims the documents of
a verified 100,000-document bundle (the cap of ``max-documents``) and answers every round with
the global model whose classification head is rewritten to tag nothing as PHI, scaled to stay
under the ``max-update-norm-ratio`` check against the model's own norm. Before the weight cap
and the median-relative norm checks (``coordinator/aggregate/influence.py``), that update
weighed 100,000 against the honest sites' 24 each and the averaged model tagged nothing: the
``legacy`` row below, the settings that reproduce the old rules, shows it still would.

The token F1 of the FedAvg model at each honest site is compared with the noise between two
honest runs (seeds 13 and 14): under the default rules, and under each robust aggregator with
the outlier refusal turned off (the aggregator alone has to keep it within 0.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flwr.app import Array, ArrayRecord, Message, RecordDict

from coordinator.aggregate.fedavg import run_fedavg, update_problem
from coordinator.aggregate.trainer import init_token_classifier
from coordinator.deployment.keys import load_registry
from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from ner.infer import machine_annotate
from protocol import LabelMapping
from protocol.rounds import FedAvgUpdate, RollCallReply
from protocol.rounds import TestSplitSize as SplitSize
from shared import wire
from shared.corpus_io import read_corpus
from shared.label_mapping import harmonise
from shared.metrics.model_metrics import evaluate_predictions
from site_agent.client_app import app as client_app
from tests.coordinator.conftest import World, make_world, node_configs
from tests.security.hostile import HostileGrid, verified_stub

HONEST = ("site-a", "site-b", "site-c")
STEERER, STEERER_NODE = "steerer", 999
CLAIMED = 100_000
LABELS = ("ID", "LOC", "ORG", "PER", "TIME")


def head_rewrite(global_weights: ArrayRecord) -> ArrayRecord:
    """The global model with its head set to answer ``O`` everywhere: weights zero, the ``O``
    bias (tag 0) raised just enough, everything else untouched."""
    rewritten = ArrayRecord()
    for key in global_weights:
        array = global_weights[key].numpy().copy()
        if key.startswith("classifier.") and key.endswith("weight"):
            array[:] = 0
        elif key.startswith("classifier.") and key.endswith("bias"):
            array[:] = 0
            array[0] = 5.0
        rewritten[key] = Array.from_numpy_ndarray(array)
    return rewritten


def steer(message: Message, _: Message | None) -> RecordDict:
    weights = wire.model_weights(message.content, wire.GLOBAL_MODEL)
    assert weights is not None
    rewritten = head_rewrite(weights)
    assert update_problem(rewritten, weights, 0.5) is None  # under the model-norm check
    update = FedAvgUpdate(num_examples=CLAIMED)
    return wire.pack(update, {wire.MODEL_PREFIX + wire.GLOBAL_MODEL: rewritten})


@dataclass(frozen=True)
class Setup:
    world: World
    configs: dict[int, dict[str, Any]]
    mapping: LabelMapping
    root: Path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    from site_agent.models.tiny import tiny_encoder
    from tests.template_sites import demo_corpus

    root = tmp_path_factory.mktemp("steering")
    texts = [d.text for s in HONEST for d in demo_corpus(s, 20, 0, "v").documents]
    base = tiny_encoder(root / "base", texts)
    world = make_world(root, base, list(HONEST), set())
    mapping = LabelMapping.model_validate_json(world.mapping.read_text(encoding="utf-8"))
    return Setup(world, node_configs(world), mapping, root)


def fedavg_f1(setup: Setup, name: str, *, steerer: bool, seed: int = 13, **rules: Any) -> dict:
    """Token F1 at each honest site of the FedAvg model of one run, and the run's rounds."""
    world, out = setup.world, setup.root / name
    settings = FederationSettings(
        registry=world.registry,
        base_model=world.base_model,
        output_dir=out,
        mapping=world.mapping,
        fedavg_rounds=2,
        local_epochs=2,
        learning_rate=3e-3,
        batch_size=4,
        seed=seed,
        **rules,
    )
    state = RunState(settings, load_registry(world.registry), setup.mapping)
    configs = dict(setup.configs)
    if steerer:
        configs[STEERER_NODE] = {}
    size = SplitSize(n_documents=12, n_spans=12, n_characters=100)
    for node, config in configs.items():
        site = config.get("site-id", STEERER)
        state.sites[node] = RollCallReply(
            site_id=site, labels=LABELS, manifest=None, test_split=size, has_baseline=False
        )
        state.bundles[site] = verified_stub(site, CLAIMED if site == STEERER else 24)
    grid = HostileGrid(client_app, configs, {STEERER_NODE: steer} if steerer else {})
    initial = init_token_classifier(world.base_model, LABELS, out / "init", seed)
    model = run_fedavg(grid, state, initial, LABELS, out / "fedavg")
    assert model is not None
    scores = {}
    for site in HONEST:
        test = read_corpus(world.sites[site].site_dir / "01-split" / "test.jsonl")
        gold = harmonise(test, setup.mapping, LABELS)
        predicted = machine_annotate(model.model_dir, gold)
        metrics = evaluate_predictions(gold, predicted, None, n_bootstrap=0, seed=13)
        scores[site] = metrics.token_f1.value
    return {"f1": scores, "rounds": state.fedavg_rounds}


@pytest.fixture(scope="module")
def honest(setup: Setup) -> dict[int, dict]:
    return {seed: fedavg_f1(setup, f"honest-{seed}", steerer=False, seed=seed) for seed in (13, 14)}


def noise(honest: dict[int, dict]) -> dict[str, float]:
    """How far two honest runs (seeds 13 and 14) differ at any honest site, at least 0.02;
    the same bound for every site."""
    spread = max(abs(honest[13]["f1"][s] - honest[14]["f1"][s]) for s in HONEST)
    return dict.fromkeys(HONEST, max(0.02, spread))


def test_the_honest_model_learns_and_the_attack_works_under_the_old_rules(
    setup: Setup, honest: dict[int, dict]
) -> None:
    """The settings of the old rules (no weight cap, no median-relative check): the steerer
    sets the model alone and it tags nothing, far beyond the noise between honest runs."""
    assert all(f1 > 0.3 for f1 in honest[13]["f1"].values()), honest[13]["f1"]
    legacy = fedavg_f1(
        setup, "legacy", steerer=True, fedavg_max_weight_ratio=1e9, fedavg_max_norm_ratio=1e9
    )
    for site, f1 in legacy["f1"].items():
        assert honest[13]["f1"][site] - f1 > 5 * noise(honest)[site], (site, legacy["f1"])


def test_the_default_rules_refuse_the_steerer_and_keep_the_honest_f1(
    setup: Setup, honest: dict[int, dict]
) -> None:
    attacked = fedavg_f1(setup, "attacked", steerer=True)
    for site, f1 in attacked["f1"].items():
        assert abs(f1 - honest[13]["f1"][site]) <= noise(honest)[site], (site, attacked["f1"])
    for played in attacked["rounds"]:
        assert STEERER not in played.contributors
        assert (STEERER, "update_norm_outlier") in {(r.site_id, r.reason) for r in played.refused}


def test_a_steerer_that_sends_honest_looking_weights_is_capped_in_weight(setup: Setup) -> None:
    """The weight cap alone: without the outlier refusal, the 100,000-document site weighs at
    most twice the median of the others (24), not 100,000."""
    capped = fedavg_f1(setup, "capped", steerer=True, fedavg_max_norm_ratio=1e9)
    (first, *_) = capped["rounds"]
    assert STEERER in first.contributors
    caps = {r.site_id: r.detail for r in first.refused if r.reason == "weight_capped"}
    assert caps.keys() == {STEERER} and caps[STEERER].startswith("weight 48 instead of its 100000")


ROBUST_BOUND = 0.2  # token F1 one steerer among four updates may move a robust aggregator;
# the legacy rule took the honest sites from about 0.97 to nothing tagged


@pytest.mark.parametrize("aggregator", ["median"])  # trimmed-mean is the same rule at 4 sites
def test_a_robust_aggregator_alone_bounds_the_steerer(setup: Setup, aggregator: str) -> None:
    """Outlier refusal off: the coordinate-wise rule alone keeps every coordinate within the
    honest range. With four updates the median is the mean of the middle two, so the steerer
    still moves it a little (measured under load: 0.02 to 0.05 token F1 with this file alone,
    0.11 inside the whole suite, against 0.00 to 0.06 between honest seeds); the legacy rule
    lost everything."""
    rules = {"fedavg_aggregator": aggregator}
    plain = fedavg_f1(setup, f"{aggregator}-honest", steerer=False, **rules)
    attacked = fedavg_f1(
        setup, f"{aggregator}-attacked", steerer=True, fedavg_max_norm_ratio=1e9, **rules
    )
    assert all(r.aggregator == aggregator for r in attacked["rounds"])
    assert all(STEERER in r.contributors for r in attacked["rounds"])
    for site, f1 in attacked["f1"].items():
        assert abs(f1 - plain["f1"][site]) <= ROBUST_BOUND, (site, plain["f1"], attacked["f1"])
    assert np.mean(list(plain["f1"].values())) > 0.3
