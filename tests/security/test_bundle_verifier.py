"""Adversarial bundles: one mutation table, run against the one verifier on both sides.

Each row changes a bundle the real export built, the way a careless operator or a hostile
site could, and names the reason the bundle must be refused with. The same table runs

- through the site's folder verifier (what ``build_bundle`` and ``pack_bundle`` use),
- through the coordinator's verifier on what a tampering site would send,
- and, for a sample, through a real coordinator ``collect`` phase over a Flower ClientApp.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flwr.app import Context, Message
from flwr.clientapp import ClientApp
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save

from coordinator.collect.phase import collect
from coordinator.collect.verify import BundleRejected, verify_received_bundle
from coordinator.deployment.keys import load_registry, register_site
from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from coordinator.verified_bundle import VerifiedBundle
from protocol.export import UnsafeArtifactName, check_artifact_name
from protocol.rounds import RollCallReply
from protocol.rounds import TestSplitSize as SplitSize
from shared import wire
from shared.bundle_folder import read_bundle_folder
from shared.bundle_limits import DEFAULT_LIMITS
from shared.bundle_verify import verify_bundle_bytes
from shared.contained import PathEscapeError, contained_path
from shared.errors import VerificationError
from shared.provenance import sha256_bytes
from shared.signing import load_public_key
from site_agent.export.verify import verify_bundle
from site_agent.federation.bundle import pack_bundle
from site_agent.federation.layout import SiteFailure
from tests.bundles import SiteKeys, entry_for, forge, good_bundle, raw_received, site_keys
from tests.coordinator.fake_grid import InProcessGrid

SITE = "hospital-a"


@dataclass(frozen=True)
class World:
    bundle: Path
    keys: SiteKeys
    other: SiteKeys
    registry: Path


def _encoder(folder: Path) -> Path:
    import numpy as np

    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(save({"w": np.arange(6, dtype=np.float32)}))
    (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    return folder


@pytest.fixture
def world(tmp_path: Path) -> World:
    keys = site_keys(tmp_path / "keys")
    other = site_keys(tmp_path / "keys", "attacker")
    bundle = good_bundle(
        tmp_path,
        SITE,
        keys,
        encoder_dir=_encoder(tmp_path / "encoder"),
        site_report={"token_f1": 0.5},
    )
    registry = tmp_path / "registry.json"
    register_site(registry, SITE, keys.public)
    return World(bundle, keys, other, registry)


# --- mutations --------------------------------------------------------------------------------


def _manifest(w: World) -> dict[str, Any]:
    return json.loads((w.bundle / "manifest.json").read_text(encoding="utf-8"))


def _resign(change: Callable[[dict[str, Any]], None]) -> Callable[[World], None]:
    return lambda w: forge(w.bundle, change, w.keys.private)


def _entry(manifest: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(a for a in manifest["artifacts"] if a["kind"] == kind)


def _replace(kind: str, data: bytes, *, audit_covers: bool = True) -> Callable[[World], None]:
    """Swap the artifact of ``kind`` for ``data``, re-list it and re-sign (a site with its key)."""

    def mutate(w: World) -> None:
        name = _entry(_manifest(w), kind)["name"]
        (w.bundle / name).write_bytes(data)

        def change(m: dict[str, Any]) -> None:
            entry = _entry(m, kind)
            entry.update(sha256=sha256_bytes(data), size_bytes=len(data))
            if kind == "synthetic_corpus" and audit_covers:
                m["audit"]["corpus_sha256"] = entry["sha256"]
            if kind == "audit_report":
                m["audit"]["report_sha256"] = entry["sha256"]

        forge(w.bundle, change, w.keys.private)

    return mutate


def _report_edit(change: Callable[[dict[str, Any]], None]) -> Callable[[World], None]:
    def mutate(w: World) -> None:
        report = json.loads((w.bundle / "audit.json").read_text(encoding="utf-8"))
        change(report)
        _replace("audit_report", json.dumps(report).encode())(w)

    return mutate


def _forged_corpus(data: bytes) -> Callable[[World], None]:
    """A new corpus with an audit report re-pointed at it, all re-signed: a site forging all."""

    def mutate(w: World) -> None:
        _replace("synthetic_corpus", data)(w)
        _report_edit(lambda r: r.update(audited_corpus_sha256=sha256_bytes(data)))(w)

    return mutate


def _flip(name: str, where: str) -> Callable[[World], None]:
    def mutate(w: World) -> None:
        path = w.bundle / name
        data = bytearray(path.read_bytes())
        if where == "append":
            data += b"\n"
        elif where == "truncate":
            data = data[:-1]
        else:
            index = {"first": 0, "middle": len(data) // 2, "last": len(data) - 1}[where]
            data[index] ^= 0x01
        path.write_bytes(bytes(data))

    return mutate


def _add_listed(name: str, kind: str, data: bytes = b"{}") -> Callable[[World], None]:
    def mutate(w: World) -> None:
        entry = entry_for(w.bundle, name, kind, data) if "\0" not in name else None
        if entry is None:
            entry = {"name": name, "kind": kind, "sha256": sha256_bytes(data), "size_bytes": 2}
        forge(w.bundle, lambda m: m["artifacts"].append(entry), w.keys.private)

    return mutate


def _list_name(name: str) -> Callable[[World], None]:
    """A manifest entry with ``name`` (re-signed), without writing any file."""
    entry = {"name": name, "kind": "encoder_weights", "sha256": "0" * 64, "size_bytes": 1}
    return _resign(lambda m: m["artifacts"].append(entry))


def _other_key_signs(set_signer: bool) -> Callable[[World], None]:
    def mutate(w: World) -> None:
        def change(m: dict[str, Any]) -> None:
            if set_signer:
                m["signer_key_id"] = w.other.key_id

        forge(w.bundle, change, w.other.private)

    return mutate


def _signature(text: str) -> Callable[[World], None]:
    return lambda w: (w.bundle / "manifest.json.sig").write_text(text, encoding="ascii")


def _flip_signature(w: World) -> None:
    raw = bytearray(base64.b64decode((w.bundle / "manifest.json.sig").read_text()))
    raw[0] ^= 0x01
    (w.bundle / "manifest.json.sig").write_text(base64.b64encode(bytes(raw)).decode())


def _edit_manifest_unsigned(w: World) -> None:
    path = w.bundle / "manifest.json"
    path.write_text(path.read_text().replace('"n_documents": 3', '"n_documents": 2'))


def _unlisted(w: World) -> None:
    (w.bundle / "real_notes.jsonl").write_text('{"id": "r", "text": "Juan Perez"}\n')


def _unlisted_in_encoder(w: World) -> None:
    (w.bundle / "encoder" / "training_args.bin").write_bytes(b"pickle")


def _missing(name: str) -> Callable[[World], None]:
    return lambda w: (w.bundle / name).unlink()


def _rule_contradicts_figure(report: dict[str, Any]) -> None:
    report["rules"][0].update(measured=0.9, threshold=0.5, comparison="<=", passed=True)


TRAVERSAL = [
    "../evil.json",
    "encoder/../../evil.json",
    "/etc/passwd",
    "encoder\\..\\evil.json",
    "encoder/x\x00.json",
    ".hidden",
    "encoder/./config.json",
    "encoder//config.json",
    "encoder/",
    "C:/evil.json",
    "~/evil.json",
    "a/b/c/d/e.json",
    "x" * 201,
    "manifest.json",
    "encoder/\n.json",
]

CASES: list[tuple[str, Callable[[World], None], str]] = [
    # each byte class of each artifact
    *[
        (f"{name} byte {where}", _flip(name, where), "hash_mismatch")
        for name in (
            "synthetic.jsonl",
            "audit.json",
            "site_report.json",
            "encoder/config.json",
            "encoder/model.safetensors",
        )
        for where in ("first", "middle", "last", "append", "truncate")
    ],
    ("manifest edited unsigned", _edit_manifest_unsigned, "bad_signature"),
    ("manifest byte flipped", _flip("manifest.json", "middle"), "bad_signature"),
    ("signature bit flipped", _flip_signature, "bad_signature"),
    ("signature empty", _signature(""), "bad_signature"),
    ("signature not base64", _signature("%%%not-base64%%%"), "bad_signature"),
    ("signature oversized", _signature("A" * 5000), "bad_signature"),
    # re-signing with other keys
    ("re-signed by another key", _other_key_signs(False), "bad_signature"),
    ("re-signed by another key naming itself", _other_key_signs(True), "bad_signature"),
    # manifest fields (re-signed with the site's own key)
    ("schema newer", _resign(lambda m: m.update(schema_version="2")), "schema_version"),
    ("schema missing", _resign(lambda m: m.pop("schema_version")), "schema_version"),
    ("schema as number", _resign(lambda m: m.update(schema_version=1)), "schema_version"),
    ("site id of another site", _resign(lambda m: m.update(site_id="hospital-b")), "site_mismatch"),
    ("site id traversal", _resign(lambda m: m.update(site_id="../x")), "malformed_bundle"),
    ("signer id blank", _resign(lambda m: m.update(signer_key_id="")), "unknown_site_key"),
    ("signer id other", _resign(lambda m: m.update(signer_key_id="ffff")), "unknown_site_key"),
    ("document count", _resign(lambda m: m.update(n_documents=4)), "malformed_bundle"),
    ("document count negative", _resign(lambda m: m.update(n_documents=-1)), "malformed_bundle"),
    ("unknown field", _resign(lambda m: m.update(extra_field=1)), "malformed_bundle"),
    ("artifacts not a list", _resign(lambda m: m.update(artifacts="x")), "malformed_bundle"),
    ("manifest not an object", _resign(lambda m: m.clear()), "schema_version"),
    (
        "sha not hex",
        _resign(lambda m: _entry(m, "site_report").update(sha256="Z" * 64)),
        "malformed_bundle",
    ),
    (
        "size negative",
        _resign(lambda m: _entry(m, "site_report").update(size_bytes=-1)),
        "malformed_bundle",
    ),
    (
        "duplicate entry",
        _resign(lambda m: m["artifacts"].append(dict(m["artifacts"][0]))),
        "malformed_bundle",
    ),
    (
        "names differing in case",
        _add_listed("Synthetic.jsonl", "site_report"),
        "malformed_bundle",
    ),
    *[(f"traversal {name!r}", _list_name(name), "malformed_bundle") for name in TRAVERSAL],
    # what a bundle may hold
    (
        "encoder as pickle",
        _add_listed("encoder/weights.bin", "encoder_weights"),
        "malformed_bundle",
    ),
    (
        "encoder file outside encoder/",
        _add_listed("weights.json", "encoder_weights"),
        "malformed_bundle",
    ),
    ("second corpus", _add_listed("more.jsonl", "synthetic_corpus"), "malformed_bundle"),
    ("second audit report", _add_listed("audit2.json", "audit_report"), "malformed_bundle"),
    ("report under encoder/", _add_listed("encoder/r.json", "site_report"), "malformed_bundle"),
    (
        "kind changed",
        _resign(lambda m: _entry(m, "audit_report").update(kind="site_report")),
        "malformed_bundle",
    ),
    # extra and missing files
    ("unlisted file", _unlisted, "unlisted_artifact"),
    ("unlisted file in encoder/", _unlisted_in_encoder, "unlisted_artifact"),
    *[
        (f"missing {name}", _missing(name), "missing_artifact")
        for name in ("synthetic.jsonl", "audit.json", "encoder/model.safetensors")
    ],
    # the audit record and report
    (
        "record says failed",
        _resign(lambda m: m["audit"].update(passed=False, rules_failed=["ngram_recall_5"])),
        "audit_failed",
    ),
    (
        "record lists a failed rule",
        _resign(lambda m: m["audit"].update(rules_failed=["x"])),
        "audit_failed",
    ),
    (
        "record covers another corpus",
        _resign(lambda m: m["audit"].update(corpus_sha256="0" * 64)),
        "audit_failed",
    ),
    (
        "record cites another report",
        _resign(lambda m: m["audit"].update(report_sha256="0" * 64)),
        "audit_failed",
    ),
    ("report says failed", _report_edit(lambda r: r.update(passed=False)), "audit_failed"),
    ("report without rules", _report_edit(lambda r: r.update(rules=[])), "audit_failed"),
    ("rule contradicts its figure", _report_edit(_rule_contradicts_figure), "audit_failed"),
    (
        "rule failed, verdict passed",
        _report_edit(lambda r: r["rules"][0].update(passed=False)),
        "audit_failed",
    ),
    (
        "report covers another corpus",
        _report_edit(lambda r: r.update(audited_corpus_sha256="0" * 64)),
        "audit_failed",
    ),
    ("report schema newer", _report_edit(lambda r: r.update(schema_version="2")), "schema_version"),
    ("report not JSON", _replace("audit_report", b"not json"), "audit_failed"),
    # provenance
    (
        "encoder trained on another corpus",
        _resign(lambda m: m.update(trained_on_corpus_sha256="0" * 64)),
        "provenance_mismatch",
    ),
    (
        "site report of another corpus",
        lambda w: _replace("site_report", b'{"trained_on_corpus_sha256": "x"}')(w),
        "provenance_mismatch",
    ),
    (
        "record names other real text",
        _resign(lambda m: m["audit"].update(real_corpus_sha256="0" * 64)),
        "provenance_mismatch",
    ),
    (
        "report names other real text",
        _report_edit(lambda r: r.update(real_corpus_sha256="0" * 64)),
        "provenance_mismatch",
    ),
    (
        "dropped documents hidden",
        _report_edit(lambda r: r.update(n_input_documents=r["n_input_documents"] + 1)),
        "provenance_mismatch",
    ),
    # the corpus
    ("corpus empty", _forged_corpus(b""), "malformed_bundle"),
    ("corpus not JSONL", _forged_corpus(b"{not json}\n"), "malformed_bundle"),
    (
        "corpus Latin-1",
        _forged_corpus('{"id": "é"}\n'.encode("latin-1")),
        "malformed_bundle",
    ),
    (
        "corpus swapped, audit not updated",
        _replace(
            "synthetic_corpus", b'{"id": "r", "text": "x", "spans": []}\n', audit_covers=False
        ),
        "audit_failed",
    ),
]


def _ids(cases: list[tuple[str, Any, str]]) -> list[str]:
    return [c[0] for c in cases]


def test_the_good_bundle_verifies_everywhere(world: World) -> None:
    manifest = verify_bundle(world.bundle, world.keys.public)
    assert manifest.site_id == SITE and manifest.signer_key_id == world.keys.key_id
    registry = load_registry(world.registry)
    verified = verify_received_bundle(raw_received(world.bundle), SITE, registry)
    assert verified.corpus is not None and len(verified.corpus) == 3
    assert set(verified.weights) == {"encoder/model.safetensors"}
    packed = pack_bundle(world.bundle)
    assert wire.BUNDLE in packed.config_records


@pytest.mark.parametrize(("case", "mutate", "reason"), CASES, ids=_ids(CASES))
def test_site_verifier_refuses(world: World, case: str, mutate: Any, reason: str) -> None:
    mutate(world)
    public = load_public_key(world.keys.public)
    with pytest.raises(BundleRejected) as info:
        verify_bundle_bytes(read_bundle_folder(world.bundle), public, SITE)
    assert info.value.reason == reason, (case, info.value.detail)
    if reason == "site_mismatch":
        return  # the site's own checks know no other site id to compare with
    with pytest.raises(VerificationError):
        verify_bundle(world.bundle, world.keys.public)
    with pytest.raises(SiteFailure, match="bundle_unverified"):
        pack_bundle(world.bundle)


@pytest.mark.parametrize(("case", "mutate", "reason"), CASES, ids=_ids(CASES))
def test_coordinator_verifier_refuses(world: World, case: str, mutate: Any, reason: str) -> None:
    mutate(world)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(raw_received(world.bundle), SITE, load_registry(world.registry))
    assert info.value.reason == reason, (case, info.value.detail)


def test_unregistered_sender_and_site_mismatch(world: World, tmp_path: Path) -> None:
    received = raw_received(world.bundle)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received, SITE, load_registry(tmp_path / "none.json"))
    assert info.value.reason == "unknown_site_key"
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received, "hospital-b", load_registry(world.registry))
    assert info.value.reason == "site_mismatch"


def test_weights_changed_in_transit_are_caught(world: World) -> None:
    from flwr.app import Array

    received = raw_received(world.bundle)
    record, _ = received.weights["encoder/model.safetensors"]
    record["w"] = Array.from_numpy_ndarray(record["w"].numpy() + 1)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received, SITE, load_registry(world.registry))
    assert info.value.reason == "hash_mismatch"


def test_weights_sent_as_file_and_as_arrays_are_refused(world: World) -> None:
    received = raw_received(world.bundle)
    received.files["encoder/model.safetensors"] = b"x"
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received, SITE, load_registry(world.registry))
    assert info.value.reason == "malformed_bundle"


# --- the site never reads outside its bundle ---------------------------------------------------


def test_pack_bundle_does_not_follow_a_manifest_name_to_the_private_key(world: World) -> None:
    """Old behaviour: ``../keys/<site>.key.pem`` listed with its hash was read and sent."""
    key_bytes = world.keys.private.read_bytes()
    (world.bundle.parent / "keys").mkdir()
    (world.bundle.parent / "keys" / "site.key.pem").write_bytes(key_bytes)
    entry = {
        "name": "../keys/site.key.pem",
        "kind": "site_report",
        "sha256": sha256_bytes(key_bytes),
        "size_bytes": len(key_bytes),
    }
    forge(world.bundle, lambda m: m["artifacts"].append(entry), world.keys.private)
    with pytest.raises(SiteFailure, match="bundle_unverified"):
        pack_bundle(world.bundle)
    bundle = read_bundle_folder(world.bundle)
    assert all(key_bytes not in data for data in bundle.artifacts.values())


def test_a_link_inside_the_bundle_is_refused(world: World) -> None:
    (world.bundle / "site_report.json").unlink()
    (world.bundle / "site_report.json").symlink_to(world.keys.private)
    with pytest.raises(BundleRejected, match="symbolic link"):
        read_bundle_folder(world.bundle)
    with pytest.raises(SiteFailure):
        pack_bundle(world.bundle)


# --- through a real coordinator collect --------------------------------------------------------


def _raw_site_app(bundles: dict[int, Path], keys: dict[int, Path]) -> ClientApp:
    """A ClientApp that answers collect with its folder as is (no site-side verifier), the
    run's nonce signed with the node's key."""
    from tests.bundles import collect_reply
    from tests.bundles import raw_received as read

    app = ClientApp()

    @app.query("collect")
    def _collect(message: Message, context: Context) -> Message:
        raw = read(bundles[context.node_id])
        return Message(collect_reply(raw, message, keys[context.node_id]), reply_to=message)

    return app


COLLECT_SAMPLE = [
    c
    for c in CASES
    if c[0]
    in {
        "synthetic.jsonl byte middle",
        "encoder/model.safetensors byte last",
        "re-signed by another key naming itself",
        "traversal 'encoder/../../evil.json'",
        "unlisted file",
        "rule contradicts its figure",
        "schema newer",
    }
]


@pytest.mark.parametrize(("case", "mutate", "reason"), COLLECT_SAMPLE, ids=_ids(COLLECT_SAMPLE))
def test_real_collect_excludes_the_bundle(
    world: World, tmp_path: Path, case: str, mutate: Any, reason: str
) -> None:
    good_keys = site_keys(tmp_path / "keys-b", "b")
    good = good_bundle(tmp_path / "b", "hospital-b", good_keys)
    register_site(world.registry, "hospital-b", good_keys.public)
    mutate(world)
    app = _raw_site_app({1: world.bundle, 2: good}, {1: world.keys.private, 2: good_keys.private})
    grid = InProcessGrid(app, {1: {}, 2: {}})
    state = RunState(
        settings=FederationSettings(
            registry=world.registry, base_model=tmp_path, output_dir=tmp_path / "out"
        ),
        registry=load_registry(world.registry),
        mapping=None,
    )
    size = SplitSize(n_documents=1, n_spans=1, n_characters=1)
    for node, site in ((1, SITE), (2, "hospital-b")):
        state.sites[node] = RollCallReply(
            site_id=site, labels=(), manifest=None, test_split=size, has_baseline=False
        )
    collect(grid, state)
    assert set(state.bundles) == {"hospital-b"}, case
    (excluded,) = state.exclusions
    assert (excluded.site_id, excluded.phase, excluded.reason) == (SITE, "collect", reason)
    assert not (tmp_path.parent / "evil.json").exists()


# --- writes on the coordinator stay inside their root ------------------------------------------


def test_exported_encoder_names_cannot_leave_the_model_folder(world: World, tmp_path: Path) -> None:
    """Old behaviour: ``encoder/../../<anywhere>`` was written outside the run folder."""
    from coordinator.aggregate.exported import exported_encoders

    verified = verify_received_bundle(
        raw_received(world.bundle), SITE, load_registry(world.registry)
    )
    evil = VerifiedBundle(
        verified.manifest,
        verified.accepted,
        verified.corpus,
        verified.weights,
        {**verified.files, "encoder/../../escaped.json": b"{}"},
    )
    out = tmp_path / "run" / "models"
    with pytest.raises(PathEscapeError):
        exported_encoders({SITE: evil}, out)
    assert not (tmp_path / "run" / "escaped.json").exists()
    assert not (tmp_path / "escaped.json").exists()
    built = exported_encoders({SITE: verified}, out)
    assert (built[0].model_dir / "model.safetensors").is_file()


def test_contained_path_refuses_links_out_of_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError):
        contained_path(root, "link/x.json")


# --- property tests over names -----------------------------------------------------------------

NAME_ALPHABET = st.sampled_from([*"ab.-_/\\\x00~:é ", "..", "encoder/", "/"])


@settings(max_examples=300, deadline=None)
@given(st.lists(NAME_ALPHABET, min_size=0, max_size=12).map("".join))
def test_every_accepted_name_stays_inside_the_root(name: str) -> None:
    root = Path("/srv/coordinator/run")
    try:
        check_artifact_name(name)
    except UnsafeArtifactName:
        return
    parts = name.split("/")
    assert ".." not in parts and "." not in parts and "" not in parts
    assert not name.startswith("/") and "\\" not in name and "\x00" not in name
    target = (root / name).resolve()
    assert target.is_relative_to(root)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="abcXYZ019._-", min_size=1, max_size=8), min_size=1, max_size=4),
    st.sampled_from(["..", ".", "", "/abs", "a\\b", "nul\x00", ".git"]),
    st.integers(min_value=0, max_value=4),
)
def test_a_bad_segment_anywhere_is_refused(parts: list[str], bad: str, at: int) -> None:
    parts = [p if not p.startswith(".") else "x" + p for p in parts]
    parts.insert(min(at, len(parts)), bad)
    with pytest.raises(UnsafeArtifactName):
        check_artifact_name("/".join(parts))


@pytest.mark.parametrize("site_id", ["../x", "a/b", ".hidden", "", "x" * 65, "a\x00"])
def test_site_ids_that_could_name_a_path_are_refused(site_id: str, tmp_path: Path) -> None:
    from pydantic import ValidationError

    from protocol.registry import SiteKeys, SiteRegistry

    with pytest.raises(ValidationError):
        SiteKeys(site_id=site_id, signing_public_key_pem="", signing_key_id="")
    keys = SiteKeys(site_id="hospital-a", signing_public_key_pem="", signing_key_id="")
    with pytest.raises(ValidationError):
        SiteRegistry(sites={"hospital-b": keys})


def test_the_site_verifies_with_its_configured_key_before_sending(world: World) -> None:
    """``signing-public-key`` in [federation] reaches the ClientApp through the node config;
    a bundle that does not verify under that key is not sent."""
    from site_agent.federation.handlers import collect as site_collect
    from site_agent.federation.join import JoinConfig
    from site_agent.federation.layout import SiteLayout

    (world.bundle.parent / "signer.pub.pem").unlink()  # only the configured key counts now

    def layout(key: Path) -> SiteLayout:
        join = JoinConfig.model_validate(
            {
                "site-id": SITE,
                "work-dir": world.bundle.parent,
                "signing-public-key": key,
                "signing-key": world.keys.private,
            }
        )
        pairs = dict(item.split("=", 1) for item in join.node_config().split(" "))
        config = {k: v.strip('"') for k, v in pairs.items()}
        return SiteLayout.from_node_config({**config, "export-dir": str(world.bundle.parent)})

    from protocol.rounds import CollectInstruction
    from shared.freshness import REPLY_SIGNATURE

    ask = wire.pack(CollectInstruction(nonce="ab" * 16))
    sent = site_collect(layout(world.keys.public), ask).config_records
    assert REPLY_SIGNATURE in sent[wire.BUNDLE]  # the nonce signed with site.toml's key
    with pytest.raises(SiteFailure, match="bundle_unverified"):
        site_collect(layout(world.other.public), ask)


def _vocabulary_json(pieces: int) -> bytes:
    """A tokenizer.json the shape of XLM-R's (e5-small's: 250k pieces, 17 MB): over the 16 MiB
    cap of other JSON artifacts."""
    vocab = [[f"▁piece{index:06d}{'x' * 40}", -float(index) / 1000] for index in range(pieces)]
    return json.dumps({"model": {"type": "Unigram", "vocab": vocab}}).encode()


def test_a_multilingual_tokenizer_passes_where_other_json_of_its_size_does_not(
    world: World,
) -> None:
    """The default Spanish encoder's tokenizer.json is 17 MB: its bundle verifies at the site
    and at the coordinator (its own cap, max_tokenizer_bytes), while a config.json that large
    is still refused as over the JSON cap."""
    tokenizer = _vocabulary_json(250_000)
    assert DEFAULT_LIMITS.max_json_bytes < len(tokenizer) < DEFAULT_LIMITS.max_tokenizer_bytes
    _add_listed("encoder/tokenizer.json", "encoder_weights", tokenizer)(world)
    verify_bundle(world.bundle, world.keys.public)
    verify_received_bundle(raw_received(world.bundle), SITE, load_registry(world.registry))
    padded = json.dumps({"model_type": "bert", "pad": "x" * len(tokenizer)}).encode()
    _add_listed("encoder/special_config.json", "encoder_weights", padded)(world)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(raw_received(world.bundle), SITE, load_registry(world.registry))
    assert info.value.reason == "over_limit"
