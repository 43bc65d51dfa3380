"""A hostile site's replies through the real collect, aggregate and cross-site phases.

Each row is one reply a site can send (signed with its own key where a signature is needed);
the phase must exclude that site with the named reason, keep the honest site, and never
raise. Before the fix, every row either ended the phase with an exception (``crash``) or was
accepted (``accepted``); the ``before`` column says which.
"""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flwr.app import Array, ArrayRecord, ConfigRecord, Message, RecordDict
from safetensors.numpy import save

from coordinator.aggregate.fedavg import run_fedavg
from coordinator.collect.phase import collect
from coordinator.cross_site import cross_site
from coordinator.deployment.keys import load_registry, register_site
from protocol import Corpus, Document
from protocol.export import MANIFEST, SIGNATURE
from protocol.rounds import BASELINE, CrossSiteReply, FedAvgUpdate
from shared import wire
from shared.freshness import REPLY_SIGNATURE, sign_collect_reply
from shared.signing import load_private_key
from site_agent.client_app import app as client_app
from tests.bundles import SiteKeys, collect_reply, forge, good_bundle, raw_received, site_keys
from tests.coordinator.state import run_state
from tests.security.hostile import (
    HostileGrid,
    Responder,
    add_encoder,
    manifest_of,
    nested,
    replace_artifact,
    replace_corpus,
    verified_stub,
)

HONEST, HOSTILE = "honest", "hostile"
NODES = {1: HONEST, 2: HOSTILE}
DEEP = 200_000  # far past Python's recursion limit


@dataclass(frozen=True)
class Sites:
    root: Path
    honest: Path
    hostile: Path
    honest_keys: SiteKeys
    hostile_keys: SiteKeys
    registry: Path


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    root = tmp_path_factory.mktemp("hostile")
    honest_keys, hostile_keys = site_keys(root, HONEST), site_keys(root, HOSTILE)
    honest = good_bundle(root, HONEST, honest_keys, n_documents=4)
    hostile = good_bundle(root, HOSTILE, hostile_keys, n_documents=3, site_report={"f1": 0.5})
    registry = root / "registry.json"
    register_site(registry, HONEST, honest_keys.public)
    register_site(registry, HOSTILE, hostile_keys.public)
    return Sites(root, honest, hostile, honest_keys, hostile_keys, registry)


def honest_config(s: Sites) -> dict[str, str]:
    return {
        "site-id": HONEST,
        "site-dir": str(s.root),
        "export-dir": str(s.honest.parent),
        "signing-public-key": str(s.honest_keys.public),
        "signing-key": str(s.honest_keys.private),
    }


# --- collect ------------------------------------------------------------------------------------

Craft = Callable[[Path, Sites], Responder]


def signed(bundle: Path, s: Sites) -> Responder:
    """The folder as a site that skips its own verifier sends it, the nonce signed."""
    key = s.hostile_keys.private
    return lambda message, _: collect_reply(raw_received(bundle), message, key)


def _nested_manifest(*_: Any) -> RecordDict:
    return RecordDict({wire.BUNDLE: ConfigRecord({MANIFEST: nested(DEEP), SIGNATURE: "AAAA"})})


def unsigned_nested_manifest(bundle: Path, s: Sites) -> Responder:
    return _nested_manifest


def no_bundle_record(bundle: Path, s: Sites) -> Responder:
    return lambda *_: RecordDict({"something": ConfigRecord({"x": 1})})


def nested_safetensors_header(bundle: Path, s: Sites) -> Responder:
    def respond(message: Message, _: Any) -> RecordDict:
        content = collect_reply(raw_received(bundle), message, s.hostile_keys.private)
        content.config_records[wire.BUNDLE][wire.HEADER_PREFIX + "encoder/model.safetensors"] = (
            nested(DEEP)
        )
        content[wire.WEIGHTS_PREFIX + "encoder/model.safetensors"] = ArrayRecord()
        return content

    return respond


def nested_site_report(bundle: Path, s: Sites) -> Responder:
    replace_artifact(bundle, "site_report", nested(DEEP), s.hostile_keys.private)
    return signed(bundle, s)


def oversized_document(bundle: Path, s: Sites) -> Responder:
    corpus = Corpus(documents=(Document(id="big", text="palabra " * 40_000),))  # 320k chars
    replace_corpus(bundle, corpus, s.hostile_keys.private)
    return signed(bundle, s)


def too_many_documents(bundle: Path, s: Sites) -> Responder:
    lines = b"".join(b'{"id": "d%d", "text": "a"}\n' % i for i in range(100_001))
    replace_corpus(bundle, lines, s.hostile_keys.private)  # one over the default cap
    return signed(bundle, s)


def two_megabyte_manifest(bundle: Path, s: Sites) -> Responder:
    forge(bundle, lambda m: m.update(config_digest="x" * 2_000_000), s.hostile_keys.private)
    return signed(bundle, s)


def _encoder(bundle: Path, s: Sites, weights: bytes, config: dict[str, Any]) -> Responder:
    files = {"model.safetensors": weights, "config.json": json.dumps(config).encode()}
    add_encoder(bundle, files, s.hostile_keys.private)
    return signed(bundle, s)


BERT = {"model_type": "bert"}
GOOD_WEIGHTS = save({"w": np.arange(6, dtype=np.float32)})


def forty_terabyte_tensor(bundle: Path, s: Sites) -> Responder:
    header = json.dumps({"w": {"dtype": "F32", "shape": [10**13], "data_offsets": [0, 4 * 10**13]}})
    data = len(header).to_bytes(8, "little") + header.encode() + b"\0" * 16
    return _encoder(bundle, s, data, BERT)


def pickle_named_safetensors(bundle: Path, s: Sites) -> Responder:
    return _encoder(bundle, s, pickle.dumps({"w": [1.0, 2.0]}), BERT)


def nan_weights(bundle: Path, s: Sites) -> Responder:
    return _encoder(bundle, s, save({"w": np.array([1.0, np.nan], dtype=np.float32)}), BERT)


def auto_map_config(bundle: Path, s: Sites) -> Responder:
    config = {**BERT, "auto_map": {"AutoModelForTokenClassification": "evil.Model"}}
    return _encoder(bundle, s, GOOD_WEIGHTS, config)


def replayed_reply(bundle: Path, s: Sites) -> Responder:
    """A reply recorded in an earlier run: signed over that run's nonce."""

    def respond(message: Message, _: Any) -> RecordDict:
        content = collect_reply(raw_received(bundle))
        old = sign_collect_reply("ab" * 16, (bundle / MANIFEST).read_bytes(),
                                 load_private_key(s.hostile_keys.private))  # fmt: skip
        content.config_records[wire.BUNDLE][REPLY_SIGNATURE] = old
        return content

    return respond


def no_nonce_signature(bundle: Path, s: Sites) -> Responder:
    return lambda *_: collect_reply(raw_received(bundle))


def laundered_corpus(bundle: Path, s: Sites) -> Responder:
    """The honest site's corpus, re-signed under the hostile site's id in a later bundle (issue
    50: the later submitter alone is excluded; both were before)."""
    name = next(a["name"] for a in manifest_of(s.honest)["artifacts"]
                if a["kind"] == "synthetic_corpus")  # fmt: skip
    replace_corpus(bundle, (s.honest / name).read_bytes(), s.hostile_keys.private)
    forge(bundle, lambda m: m.update(created_at="2100-01-01T00:00:00Z"), s.hostile_keys.private)
    return signed(bundle, s)


# case, before, craft, reason, whether the honest site keeps its bundle
COLLECT: list[tuple[str, str, Craft, str, bool]] = [
    ("unsigned nested manifest", "crash", unsigned_nested_manifest, "bad_signature", True),
    ("reply without a bundle record", "crash", no_bundle_record, "malformed_bundle", True),
    ("nested safetensors header", "crash", nested_safetensors_header, "over_limit", True),
    ("signed nested site_report.json", "crash", nested_site_report, "over_limit", True),
    ("signed 320k-character document", "accepted", oversized_document, "over_limit", True),
    ("signed 100,001 documents", "accepted", too_many_documents, "over_limit", True),
    ("signed 2 MB manifest", "accepted", two_megabyte_manifest, "over_limit", True),
    ("signed header declaring 40 TB", "accepted", forty_terabyte_tensor, "unsafe_model", True),
    ("pickle named .safetensors", "accepted", pickle_named_safetensors, "unsafe_model", True),
    ("NaN encoder weights", "accepted", nan_weights, "unsafe_model", True),
    ("auto_map in encoder config", "accepted", auto_map_config, "unsafe_model", True),
    ("reply replayed from another run", "accepted", replayed_reply, "stale_reply", True),
    ("reply without the nonce signature", "accepted", no_nonce_signature, "stale_reply", True),
    ("another site's corpus re-signed", "accepted", laundered_corpus, "duplicate_corpus", True),
]


@pytest.mark.parametrize(
    ("case", "before", "craft", "reason", "honest_kept"), COLLECT, ids=[c[0] for c in COLLECT]
)
def test_collect_excludes_the_hostile_reply_and_goes_on(
    sites: Sites,
    tmp_path: Path,
    case: str,
    before: str,
    craft: Craft,
    reason: str,
    honest_kept: bool,
) -> None:
    bundle = Path(shutil.copytree(sites.hostile, tmp_path / "bundle"))
    grid = HostileGrid(client_app, {1: honest_config(sites), 2: {}}, {2: craft(bundle, sites)})
    state = run_state(tmp_path, NODES)
    state.registry = load_registry(sites.registry)
    collect(grid, state)  # before: `crash` rows raised here
    assert (HONEST in state.bundles) is honest_kept, state.exclusions
    assert HOSTILE not in state.bundles, case
    assert (HOSTILE, "collect", reason) in {
        (e.site_id, e.phase, e.reason) for e in state.exclusions
    }


def test_the_honest_reply_signs_this_runs_nonce(sites: Sites, tmp_path: Path) -> None:
    """The site-side change: the ClientApp signs the coordinator's nonce into its reply."""
    bundle = Path(shutil.copytree(sites.hostile, tmp_path / "bundle"))
    grid = HostileGrid(client_app, {1: honest_config(sites), 2: {}}, {2: signed(bundle, sites)})
    state = run_state(tmp_path, NODES)
    state.registry = load_registry(sites.registry)
    collect(grid, state)
    assert set(state.bundles) == {HONEST, HOSTILE}, state.exclusions


# --- aggregate (FedAvg) ---------------------------------------------------------------------------

Update = Callable[[ArrayRecord], tuple[ArrayRecord, int] | RecordDict]


def _shift(record: ArrayRecord, by: float) -> ArrayRecord:
    """Every float tensor moved by ``by`` (integer buffers as they are)."""
    arrays = {k: record[k].numpy() for k in record}
    return ArrayRecord(
        {
            k: Array.from_numpy_ndarray(a + np.asarray(by, a.dtype) if a.dtype.kind == "f" else a)
            for k, a in arrays.items()
        }
    )


def _reply(weights: ArrayRecord, n: int) -> RecordDict:
    return wire.pack(FedAvgUpdate(num_examples=n), {wire.MODEL_PREFIX + wire.GLOBAL_MODEL: weights})


def _garbage(record: ArrayRecord) -> RecordDict:
    broken = ArrayRecord()
    for key in record:
        a = record[key]
        broken[key] = Array(dtype=a.dtype, shape=a.shape, stype=a.stype, data=b"\x93NUMPY garbage")
    return _reply(broken, 10)


def _nan(record: ArrayRecord) -> RecordDict:
    out = {k: record[k].numpy().copy() for k in record}
    out["w"][0] = np.nan
    return _reply(ArrayRecord({k: Array.from_numpy_ndarray(v) for k, v in out.items()}), 10)


# case, before, hostile reply from the global weights, reason (None: capped, still averaged)
FEDAVG: list[tuple[str, str, Update, str]] = [
    ("10^15 examples claimed", "accepted", lambda r: _reply(_shift(r, 0.02), 10**15),
     "examples_capped"),
    ("NaN weights", "accepted", _nan, "non_finite_update"),
    ("update 1000x the model", "accepted", lambda r: _reply(_shift(r, 1000.0), 10),
     "update_norm_exceeded"),
    ("weights that do not decode", "crash", _garbage, "invalid_reply"),
]  # fmt: skip


@pytest.fixture
def initial(tmp_path: Path) -> Path:
    folder = tmp_path / "initial"
    folder.mkdir()
    weights = {"w": np.ones(8, dtype=np.float32), "step": np.array([3], dtype=np.int64)}
    (folder / "model.safetensors").write_bytes(save(weights))
    (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    return folder


def _fedavg_site(update: Update) -> Responder:
    def respond(message: Message, _: Any) -> RecordDict:
        weights = wire.model_weights(message.content, wire.GLOBAL_MODEL)
        assert weights is not None
        reply = update(weights)
        return reply if isinstance(reply, RecordDict) else _reply(*reply)

    return respond


@pytest.mark.parametrize(("case", "before", "update", "reason"), FEDAVG, ids=[c[0] for c in FEDAVG])
def test_fedavg_refuses_or_caps_the_hostile_update(
    tmp_path: Path, initial: Path, case: str, before: str, update: Update, reason: str
) -> None:
    honest = _fedavg_site(lambda r: (_shift(r, 0.01), 10))
    grid = HostileGrid(None, {1: {}, 2: {}}, {1: honest, 2: _fedavg_site(update)})
    state = run_state(tmp_path, NODES)
    state = state.__class__(
        settings=state.settings.model_copy(update={"fedavg_rounds": 1}),
        registry=state.registry,
        mapping=None,
        sites=state.sites,
        roll=state.roll,
    )
    state.bundles = {HONEST: verified_stub(HONEST, 10), HOSTILE: verified_stub(HOSTILE, 10)}
    model = run_fedavg(grid, state, initial, ("PER",), tmp_path / "fedavg")  # before: crash
    assert model is not None
    (played,) = state.fedavg_rounds
    from safetensors.numpy import load_file

    averaged = load_file(str(model.model_dir / "model.safetensors"))["w"]
    assert np.all(np.isfinite(averaged)) and np.all(np.abs(averaged - 1.0) < 0.05), averaged
    if reason == "examples_capped":
        assert played.n_examples == 20 and HOSTILE in played.contributors
    else:
        assert played.contributors == (HONEST,)
        assert (HOSTILE, "aggregate", reason) in {
            (e.site_id, e.phase, e.reason) for e in state.exclusions
        }
    assert (HOSTILE, reason) in {(r.site_id, r.reason) for r in played.refused}, played


# --- cross-site ---------------------------------------------------------------------------------

GOOD = {"value": 0.5, "low": 0.4, "high": 0.6}


def _metrics(**overrides: Any) -> str:
    figures = {"token_f1": GOOD, "span_overlap_f1": GOOD, "document_leakage": GOOD,
               "label_recall": {"PER": 0.5}, "n_documents": 10, **overrides}  # fmt: skip
    return json.dumps({"metrics": {BASELINE: figures}, "errors": {}})


def _raw_reply(text: str) -> Responder:
    return lambda *_: RecordDict({wire.PAYLOAD: ConfigRecord({"json": text})})


def _many_models() -> str:
    one = json.loads(_metrics())["metrics"][BASELINE]
    return json.dumps({"metrics": {f"m{i}": one for i in range(100_000)}, "errors": {}})


# case, before, the site's raw reply JSON, reason
CROSS_SITE: list[tuple[str, str, str, str]] = [
    ("NaN token F1", "accepted", _metrics(token_f1={"value": float("nan"), "low": 0,
     "high": 1}), "invalid_metrics"),
    ("token F1 of 7.5", "accepted", _metrics(token_f1={"value": 7.5, "low": 7, "high": 8}),
     "invalid_metrics"),
    ("infinite leakage", "accepted",
     _metrics(document_leakage={"value": float("inf"), "low": 0, "high": float("inf")}),
     "invalid_metrics"),
    ("inverted interval", "accepted", _metrics(token_f1={"value": 0.5, "low": 0.9,
     "high": 0.1}), "invalid_metrics"),
    ("10^9 documents scored of 10", "accepted", _metrics(n_documents=10**9), "invalid_metrics"),
    ("recall of 3.0", "accepted", _metrics(label_recall={"PER": 3.0}), "invalid_metrics"),
    ("a 20 MB reply", "accepted", _many_models(), "over_limit"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "before", "reply", "reason"), CROSS_SITE, ids=[c[0] for c in CROSS_SITE]
)
def test_cross_site_refuses_figures_out_of_range(
    tmp_path: Path, case: str, before: str, reply: str, reason: str
) -> None:
    honest = _raw_reply(_metrics())
    grid = HostileGrid(None, {1: {}, 2: {}}, {1: honest, 2: _raw_reply(reply)})
    state = run_state(tmp_path, NODES)
    _, baselines = cross_site(grid, state, [], ("PER",))
    by_site = {cell.site_id: cell for cell in baselines}
    assert by_site[HONEST].metrics is not None
    assert by_site[HOSTILE].metrics is None, case
    assert (HOSTILE, "cross_site", reason) in {
        (e.site_id, e.phase, e.reason) for e in state.exclusions
    }
    CrossSiteReply.model_validate_json(_metrics())  # the honest reply is a valid one


# --- the whole federation, one hostile site per kind of reply ------------------------------------


def _nan_update(message: Message, honest: Message | None) -> RecordDict | None:
    assert honest is not None
    weights = wire.model_weights(honest.content, wire.GLOBAL_MODEL)
    assert weights is not None
    poisoned = ArrayRecord()
    for key in weights:
        array = weights[key].numpy().copy()
        if array.dtype.kind == "f":
            array.flat[0] = np.nan
        poisoned[key] = Array.from_numpy_ndarray(array)
    return _reply(poisoned, 10)


def _greedy_update(message: Message, honest: Message | None) -> RecordDict | None:
    assert honest is not None
    weights = wire.model_weights(honest.content, wire.GLOBAL_MODEL)
    assert weights is not None
    return _reply(weights, 10**15)


def _lying_metrics(message: Message, honest: Message | None) -> RecordDict | None:
    assert honest is not None
    answer = json.loads(honest.content.config_records[wire.PAYLOAD]["json"])  # type: ignore[arg-type]
    for figures in answer["metrics"].values():
        figures["token_f1"] = {"value": float("nan"), "low": 0.0, "high": 1.0}
    return RecordDict({wire.PAYLOAD: ConfigRecord({"json": json.dumps(answer)})})


def _only(message_type: str, respond: Responder) -> Responder:
    def maybe(message: Message, honest: Message | None) -> RecordDict | None:
        if message.metadata.message_type != message_type:
            return None  # the honest answer to every other message
        return respond(message, honest)

    return maybe


# hostile site, what it does, the phase that must exclude it, the reason
FEDERATION = [
    ("nested", wire.COLLECT, lambda b: _nested_manifest, "collect", "bad_signature"),
    ("replayer", wire.COLLECT, lambda b: lambda *_: collect_reply(raw_received(b)), "collect",
     "stale_reply"),
    ("poisoner", wire.FEDAVG_TRAIN, lambda b: _nan_update, "aggregate", "non_finite_update"),
    ("greedy", wire.FEDAVG_TRAIN, lambda b: _greedy_update, None, "examples_capped"),
    ("liar", wire.CROSS_SITE, lambda b: _lying_metrics, "cross_site", "invalid_metrics"),
]  # fmt: skip


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from coordinator.server_app import run_federation
    from coordinator.settings import FederationSettings
    from site_agent.models.tiny import tiny_encoder
    from tests.coordinator.conftest import make_world, node_configs
    from tests.template_sites import demo_corpus

    root = tmp_path_factory.mktemp("federation")
    names = ["site-a", "site-b", *(row[0] for row in FEDERATION)]
    texts = [d.text for s in names for d in demo_corpus(s, 10, 0, "v").documents]
    base = tiny_encoder(root / "base", texts)
    world = make_world(root, base, names, set())
    configs = node_configs(world)
    node = {c["site-id"]: n for n, c in configs.items()}
    hostile = {
        node[site]: _only(kind, craft(next((world.sites[site].site_dir / "outbox").glob("*/"))))
        for site, kind, craft, _, _ in FEDERATION
    }
    settings = FederationSettings(
        registry=world.registry,
        base_model=base,
        output_dir=root / "out",
        mapping=world.mapping,
        fedavg_rounds=1,
        train_epochs=1,
        train_min_steps=0,
        local_epochs=1,
        learning_rate=1e-3,
        batch_size=8,
        bootstrap=0,
    )
    return run_federation(HostileGrid(client_app, configs, hostile), settings)


def test_the_federation_completes_for_the_honest_sites(federation: Any) -> None:
    """Before: the nested manifest ended the collect phase, so the run, for every site."""
    report = federation
    excluded = {(e.site_id, e.phase, e.reason) for e in report.exclusions}
    refused = {(r.site_id, r.reason) for played in report.fedavg_rounds for r in played.refused}
    for site, _, _, phase, reason in FEDERATION:
        assert (site, phase, reason) in excluded if phase else (site, reason) in refused, site
    assert {b.site_id for b in report.bundles} == {"site-a", "site-b", "poisoner", "greedy", "liar"}
    fedavg = next(m for m in report.models if m.kind == "fedavg")
    assert {"site-a", "site-b", "greedy"} <= set(fedavg.trained_on)
    assert "poisoner" not in fedavg.trained_on
    for model in report.models:
        for site in ("site-a", "site-b"):
            cell = report.cell(model.name, site)
            assert cell is not None and cell.metrics is not None, (model.name, site)
    (played,) = report.fedavg_rounds
    assert played.n_examples <= sum(b.n_documents for b in report.bundles)
    from coordinator.report.write import to_markdown

    assert "greedy: examples_capped" in to_markdown(report)  # each refusal in the report
