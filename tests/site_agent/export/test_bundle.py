"""Export: the audit gate cannot be bypassed, bundles are signed, verification catches changes."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save

from protocol import Corpus, Document, Span
from protocol.audit import AuditReport
from shared.corpus_io import write_corpus
from shared.errors import ExportRefusedError, VerificationError
from shared.provenance import sha256_file, sha256_tree
from shared.signing import generate_signing_key
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.export.bundle import TRAINED_ON_KEY, BundleRequest, build_bundle, write_trained_on
from site_agent.export.gate import AuditBinding
from site_agent.export.verify import verify_bundle
from site_agent.privacy.digest import corpus_sha256
from tests.bundles import REAL

SYNTHETIC = Corpus(
    documents=(
        Document(
            id="s1",
            text="Dr Ana Ruiz ingresa por dolor abdominal.",
            spans=(Span(start=3, end=11, label="PER"),),
        ),
        Document(id="s2", text="Follow-up next week.", spans=()),
    )
)
COPY = Document(id="s3", text=REAL.documents[0].text, spans=REAL.documents[0].spans)
NO_FILTERS: dict = {"filters": {"enabled": []}}


@pytest.fixture
def site(tmp_path: Path) -> dict[str, Path]:
    write_corpus(REAL, tmp_path / "train.jsonl")
    write_corpus(SYNTHETIC, tmp_path / "synthetic.jsonl")
    corpus_path = tmp_path / "audit" / AUDITED_CORPUS
    encoder = tmp_path / "encoder"
    encoder.mkdir()
    weights = save({"w": np.arange(4, dtype=np.float32)})  # the verifier reads them as such
    (encoder / "model.safetensors").write_bytes(weights)
    (encoder / "config.json").write_text("{}")
    (encoder / "training_args.bin").write_bytes(b"pickle")
    report = tmp_path / "site_report.json"
    report.write_text('{"token_f1_gap": 0.1}')
    keys = tmp_path / "keys"
    generate_signing_key(keys / "k.pem", keys / "k.pub.pem")
    return {
        "corpus": corpus_path,
        "encoder": encoder,
        "report": report,
        "key": keys / "k.pem",
        "pub": keys / "k.pub.pem",
        "root": tmp_path,
    }


def _audit(site: dict[str, Path], passed: bool = True) -> Path:
    """A real audit of the site's synthetic corpus (failing: a copied note, no filters)."""
    synthetic = SYNTHETIC if passed else Corpus(documents=(*SYNTHETIC.documents, COPY))
    write_corpus(synthetic, site["root"] / "synthetic.jsonl")
    policy = AuditPolicy() if passed else AuditPolicy.model_validate(NO_FILTERS)
    run_audit(REAL, synthetic, policy, site["corpus"].parent)
    return site["corpus"].parent / "audit.json"


def _request(site: dict[str, Path], audit: Path | None, **kw: object) -> BundleRequest:
    if site["corpus"].exists():  # what train-synthetic stamps: the corpus it trained on
        trained_on = sha256_file(site["corpus"])
        write_trained_on(site["encoder"], trained_on)
        site["report"].write_text(json.dumps({"token_f1_gap": 0.1, TRAINED_ON_KEY: trained_on}))
    fields: dict = dict(
        site_id="h1",
        corpus_path=site["corpus"],
        audit_report_path=audit,
        signing_key_path=site["key"],
        outbox=site["root"] / "outbox",
        config_digest="abc",
        base_models={"generator": "tiny"},
        synthetic_encoder_dir=site["encoder"],
        site_report_path=site["report"],
        binding=AuditBinding(
            real=site["root"] / "train.jsonl",
            synthetic=site["root"] / "synthetic.jsonl",
            policy={},
        ),
    )
    fields.update(kw)
    return BundleRequest(**fields)


def test_bundle_is_signed_and_verifies(site: dict[str, Path]) -> None:
    bundle, manifest = build_bundle(_request(site, _audit(site)))
    assert bundle.parent == site["root"] / "outbox" and bundle.name.startswith("h1-")
    names = {a.name: a.kind for a in manifest.artifacts}
    assert names == {
        "synthetic.jsonl": "synthetic_corpus",
        "audit.json": "audit_report",
        "site_report.json": "site_report",
        "encoder/model.safetensors": "encoder_weights",
        "encoder/config.json": "encoder_weights",
        "encoder/README.md": "encoder_weights",  # the model card, bound like every artifact
    }
    assert manifest.n_documents == 2 and manifest.labels == ("PER",)
    assert manifest.audit.passed and manifest.audit.corpus_sha256 == sha256_file(site["corpus"])
    assert manifest.trained_on_corpus_sha256 == manifest.audit.corpus_sha256
    assert manifest.audit.real_corpus_sha256 == corpus_sha256(REAL)
    assert verify_bundle(bundle, site["pub"]) == manifest
    assert not (bundle / "encoder" / "training_args.bin").exists()


def test_export_refuses_without_an_audit_report(site: dict[str, Path]) -> None:
    _audit(site)
    with pytest.raises(ExportRefusedError, match="without a passing privacy audit"):
        build_bundle(_request(site, None))
    with pytest.raises(ExportRefusedError, match="without a passing privacy audit"):
        build_bundle(_request(site, site["root"] / "missing.json"))
    assert not (site["root"] / "outbox").exists()


def test_export_refuses_a_failed_audit(site: dict[str, Path]) -> None:
    with pytest.raises(ExportRefusedError, match="exact_duplicates_of_real"):
        build_bundle(_request(site, _audit(site, passed=False)))


def test_export_refuses_a_corpus_other_than_the_audited_one(site: dict[str, Path]) -> None:
    audit = _audit(site)
    with site["corpus"].open("a") as handle:
        handle.write('{"id": "real", "text": "real note", "spans": []}\n')
    with pytest.raises(ExportRefusedError, match="is not the audited corpus"):
        build_bundle(_request(site, audit))


def test_export_refuses_the_gold_annotator(site: dict[str, Path]) -> None:
    request = _request(site, _audit(site))
    gold_sha = sha256_tree(site["encoder"])
    with pytest.raises(ExportRefusedError, match="gold-trained"):
        build_bundle(dataclasses.replace(request, gold_annotator_sha256=gold_sha))


def test_export_refuses_an_encoder_without_safetensors(site: dict[str, Path]) -> None:
    (site["encoder"] / "model.safetensors").unlink()
    with pytest.raises(ExportRefusedError, match="safetensors"):
        build_bundle(_request(site, _audit(site)))


@pytest.mark.parametrize("stale", ["encoder", "site_report"])
def test_export_refuses_what_was_trained_on_another_corpus(
    site: dict[str, Path], stale: str
) -> None:
    request = _request(site, _audit(site))
    if stale == "encoder":
        write_trained_on(site["encoder"], "0" * 64)
    else:
        site["report"].write_text('{"token_f1_gap": 0.1}')
    with pytest.raises(ExportRefusedError, match="'trained_on_audited_corpus'"):
        build_bundle(request)


def test_encoder_is_optional(site: dict[str, Path]) -> None:
    _, manifest = build_bundle(_request(site, _audit(site), synthetic_encoder_dir=None))
    assert {a.kind for a in manifest.artifacts} == {
        "synthetic_corpus",
        "audit_report",
        "site_report",
    }


@pytest.mark.parametrize("tamper", ["edit_corpus", "extra_file", "edit_manifest", "drop_file"])
def test_verification_catches_changes(site: dict[str, Path], tamper: str) -> None:
    bundle, _ = build_bundle(_request(site, _audit(site)))
    if tamper == "edit_corpus":
        (bundle / "synthetic.jsonl").write_text("{}\n")
    elif tamper == "extra_file":
        (bundle / "real_notes.jsonl").write_text("secret")
    elif tamper == "edit_manifest":
        text = (bundle / "manifest.json").read_text()
        (bundle / "manifest.json").write_text(text.replace('"h1"', '"h2"'))
    else:
        (bundle / "audit.json").unlink()
    with pytest.raises(VerificationError):
        verify_bundle(bundle, site["pub"])


def test_verification_with_another_key_fails(site: dict[str, Path]) -> None:
    bundle, _ = build_bundle(_request(site, _audit(site)))
    other = site["root"] / "other"
    generate_signing_key(other / "k.pem", other / "k.pub.pem")
    with pytest.raises(VerificationError, match="signature does not verify"):
        verify_bundle(bundle, other / "k.pub.pem")
    shutil.rmtree(bundle / "encoder")
    with pytest.raises(VerificationError, match="missing"):
        verify_bundle(bundle, site["pub"])


def test_real_document_ids_are_pseudonymised_in_the_bundle(site: dict[str, Path]) -> None:
    audit = _audit(site)
    first, _ = build_bundle(_request(site, audit))
    shipped = (first / "audit.json").read_text()
    assert "MRN-4711-smith" not in shipped and "MRN-4711-smith" in audit.read_text()
    report = AuditReport.model_validate_json(shipped)
    pairs = report.measures["nearest_real"]["after"]["highest_risk_pairs"]
    assert pairs and {p["synthetic_id"] for p in pairs} <= {"s1", "s2"}
    assert all(p["real_id"].startswith("real-") for p in pairs)
    second, _ = build_bundle(_request(site, audit, outbox=site["root"] / "outbox2"))
    assert (second / "audit.json").read_bytes() == shipped.encode()  # stable for the site
