"""Bundle verification: every rejection reason, from bundles built and packed like a site does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from flwr.app import Array

from coordinator.collect.phase import unpack_received
from coordinator.collect.verify import BundleRejected, ReceivedBundle, verify_received_bundle
from coordinator.deployment.keys import load_registry, register_site
from protocol.export import ArtifactEntry
from shared.provenance import sha256_file
from shared.signing import load_private_key, sign
from site_agent.federation.bundle import pack_bundle
from tests.bundles import good_bundle, raw_received, site_keys


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path, str]:
    """(bundle folder, registry, key id) of a good bundle of site "s1"."""
    keys = site_keys(tmp_path)
    bundle = good_bundle(tmp_path, "s1", keys, n_documents=4)
    (bundle.parent / "k").write_bytes(keys.private.read_bytes())
    register_site(tmp_path / "registry.json", "s1", keys.public)
    return bundle, tmp_path / "registry.json", keys.key_id


def received(bundle: Path) -> ReceivedBundle:
    """What a site sends: the packer's records when the bundle verifies, else the raw folder
    (a site that skips its own verifier), so the coordinator's checks are what is tested."""
    try:
        return unpack_received(pack_bundle(bundle))
    except Exception:
        return raw_received(bundle)


def resign(bundle: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    change(manifest)
    data = json.dumps(manifest).encode()
    (bundle / "manifest.json").write_bytes(data)
    (bundle / "manifest.json.sig").write_text(sign(data, load_private_key(bundle.parent / "k")))


def test_good_bundle_is_accepted_with_its_corpus(site: tuple[Path, Path, str]) -> None:
    bundle, registry, key_id = site
    verified = verify_received_bundle(received(bundle), "s1", load_registry(registry))
    assert verified.accepted.signer_key_id == key_id
    assert verified.corpus is not None and len(verified.corpus) == 4


def _tamper_corpus(bundle: Path) -> None:
    with (bundle / "synthetic.jsonl").open("a") as f:
        f.write('{"id": "new", "text": "Ana", "spans": []}\n')


def _edit_manifest_unsigned(bundle: Path) -> None:
    text = (bundle / "manifest.json").read_text().replace('"n_documents": 4', '"n_documents": 5')
    (bundle / "manifest.json").write_text(text)


CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("corpus changed after signing", _tamper_corpus, "hash_mismatch"),
    ("manifest changed after signing", _edit_manifest_unsigned, "bad_signature"),
    ("newer schema", lambda b: resign(b, lambda m: m.update(schema_version="2")), "schema_version"),
    ("audit file missing", lambda b: (b / "audit.json").unlink(), "missing_artifact"),
    (
        "audit says failed",
        lambda b: resign(b, lambda m: m["audit"].update(passed=False, rules_failed=["ngram"])),
        "audit_failed",
    ),
    (
        "audit covers another corpus",
        lambda b: resign(b, lambda m: m["audit"].update(corpus_sha256="0" * 64)),
        "audit_failed",
    ),
    (
        "other signer",
        lambda b: resign(b, lambda m: m.update(signer_key_id="ffff")),
        "unknown_site_key",
    ),
]


@pytest.mark.parametrize(("case", "mutate", "reason"), CASES, ids=[c[0] for c in CASES])
def test_bad_bundle_is_rejected_with_a_named_reason(
    site: tuple[Path, Path, str], case: str, mutate: Callable[[Path], None], reason: str
) -> None:
    bundle, registry, _ = site
    mutate(bundle)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received(bundle), "s1", load_registry(registry))
    assert info.value.reason == reason, case


def test_unregistered_site_and_wrong_sender(site: tuple[Path, Path, str], tmp_path: Path) -> None:
    bundle, registry, _ = site
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received(bundle), "s1", load_registry(tmp_path / "none.json"))
    assert info.value.reason == "unknown_site_key"
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(received(bundle), "s2", load_registry(registry))
    assert info.value.reason == "site_mismatch"


def test_encoder_weights_travel_as_arrays_and_still_verify(
    site: tuple[Path, Path, str], base_model: Path
) -> None:
    """The pipeline exports the encoder as ``encoder/<file>``, every file kind encoder_weights;
    only the safetensors goes as arrays, the rest as bytes, and every hash still verifies."""
    bundle, registry, _ = site
    (bundle / "encoder").mkdir()
    entries = []
    for name in ("model.safetensors", "config.json"):
        target = bundle / "encoder" / name
        target.write_bytes((base_model / name).read_bytes())
        entries.append(
            ArtifactEntry(
                name=f"encoder/{name}", kind="encoder_weights", sha256=sha256_file(target),
                size_bytes=target.stat().st_size,
            ).model_dump()
        )  # fmt: skip

    def add_encoder(m: dict) -> None:
        m["artifacts"].extend(entries)
        m["trained_on_corpus_sha256"] = m["audit"]["corpus_sha256"]

    resign(bundle, add_encoder)
    got = received(bundle)
    assert set(got.weights) == {"encoder/model.safetensors"}
    assert "encoder/config.json" in got.files
    verified = verify_received_bundle(got, "s1", load_registry(registry))
    assert set(verified.weights) == {"encoder/model.safetensors"}
    record, _ = got.weights["encoder/model.safetensors"]
    name = next(iter(record))
    record[name] = Array.from_numpy_ndarray(record[name].numpy() + 1e-3)
    with pytest.raises(BundleRejected) as info:
        verify_received_bundle(got, "s1", load_registry(registry))
    assert info.value.reason == "hash_mismatch"
