"""A degenerate synthetic corpus (no PII spans, an encoder that learnt nothing) passes the audit
trivially; the export refuses it unless the site gives a reason, which the manifest records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator.collect.phase import unpack_received
from coordinator.collect.verify import verify_received_bundle
from coordinator.deployment.keys import load_registry, register_site
from protocol import Corpus, Document, Span
from shared.corpus_io import write_corpus
from shared.errors import ExportRefusedError
from shared.provenance import sha256_file
from shared.signing import generate_signing_key
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.export.bundle import TRAINED_ON_KEY, BundleRequest, build_bundle
from site_agent.export.gate import AuditBinding
from site_agent.export.quality import degenerate_findings
from site_agent.export.settings import ExportSettings
from site_agent.export.verify import verify_bundle
from site_agent.federation.bundle import pack_bundle
from tests.bundles import REAL

NO_SPANS = Corpus(
    documents=(
        Document(id="s1", text="Follow-up next week.", spans=()),
        Document(id="s2", text="No complaints today.", spans=()),
    )
)
WITH_SPANS = Corpus(
    documents=(
        Document(id="s1", text="Dr Ana Ruiz saw her.", spans=(Span(start=3, end=11, label="PER"),)),
        Document(id="s2", text="No complaints today.", spans=()),
    )
)


def _bundle_request(
    root: Path, synthetic: Corpus, token_f1: float | None, settings: ExportSettings
) -> BundleRequest:
    """A passing audit of ``synthetic`` and a site report with the synthetic encoder's F1."""
    write_corpus(REAL, root / "train.jsonl")
    write_corpus(synthetic, root / "synthetic.jsonl")
    run_audit(REAL, synthetic, AuditPolicy(), root / "audit")
    corpus = root / "audit" / AUDITED_CORPUS
    report: dict = {TRAINED_ON_KEY: sha256_file(corpus)}
    if token_f1 is not None:
        report["synthetic"] = {"token_f1": token_f1}
    (root / "site_report.json").write_text(json.dumps(report))
    generate_signing_key(root / "k.pem", root / "k.pub.pem")
    return BundleRequest(
        site_id="h1",
        corpus_path=corpus,
        audit_report_path=root / "audit" / "audit.json",
        signing_key_path=root / "k.pem",
        outbox=root / "outbox",
        config_digest="abc",
        base_models={},
        binding=AuditBinding(
            real=root / "train.jsonl", synthetic=root / "synthetic.jsonl", policy={}
        ),
        site_report_path=root / "site_report.json",
        quality=settings,
    )


@pytest.mark.parametrize(
    ("synthetic", "token_f1", "found"),
    [
        (NO_SPANS, 0.4, ["0 PII spans", "0 of 2 documents hold PII"]),
        (WITH_SPANS, 0.0, ["token F1 0.000"]),
        (NO_SPANS, 0.0, ["0 PII spans", "0 of 2 documents hold PII", "token F1 0.000"]),
    ],
)
def test_a_degenerate_corpus_is_refused_and_nothing_leaves(
    tmp_path: Path, synthetic: Corpus, token_f1: float, found: list[str]
) -> None:
    request = _bundle_request(tmp_path, synthetic, token_f1, ExportSettings())
    with pytest.raises(ExportRefusedError, match="degenerate") as refused:
        build_bundle(request)
    message = str(refused.value)
    assert all(f in message for f in found) and "accept_degenerate" in message
    assert not (tmp_path / "outbox").exists()


def test_a_sound_corpus_exports_without_an_override(tmp_path: Path) -> None:
    request = _bundle_request(tmp_path, WITH_SPANS, 0.4, ExportSettings())
    bundle, manifest = build_bundle(request)
    assert manifest.quality_override is None
    assert verify_bundle(bundle, tmp_path / "k.pub.pem") == manifest


def test_an_accepted_degenerate_corpus_carries_the_override_in_the_signed_manifest(
    tmp_path: Path,
) -> None:
    settings = ExportSettings(accept_degenerate="smoke run of the deployment, not for use")
    bundle, manifest = build_bundle(_bundle_request(tmp_path, NO_SPANS, 0.0, settings))
    assert manifest.quality_override is not None
    assert manifest.quality_override.reason == "smoke run of the deployment, not for use"
    assert len(manifest.quality_override.findings) == 3
    verified = verify_bundle(bundle, tmp_path / "k.pub.pem")
    assert verified.quality_override == manifest.quality_override
    # the coordinator accepts it and carries the override into what the report shows
    register_site(tmp_path / "registry.json", "h1", tmp_path / "k.pub.pem")
    received = unpack_received(pack_bundle(bundle))
    accepted = verify_received_bundle(received, "h1", load_registry(tmp_path / "registry.json"))
    assert accepted.accepted.quality_override == manifest.quality_override


@pytest.mark.parametrize(
    ("spans_per_doc", "f1", "settings", "n_findings"),
    [
        ((1, 0, 0, 0), 0.5, ExportSettings(), 0),  # 1 of 4 docs hold PII: 0.25 >= 0.05
        ((1, 0, 0, 0), 0.5, ExportSettings(min_pii_document_share=0.3), 1),
        ((2, 1, 0, 0), 0.5, ExportSettings(min_spans=4), 1),
        ((1, 1, 1, 1), None, ExportSettings(), 0),  # no F1 reported: not judged
        ((1, 1, 1, 1), 0.049, ExportSettings(), 1),
        ((0, 0, 0, 0), 0.5, ExportSettings(min_spans=0, min_pii_document_share=0), 0),
    ],
)
def test_findings_by_table(
    tmp_path: Path,
    spans_per_doc: tuple[int, ...],
    f1: float | None,
    settings: ExportSettings,
    n_findings: int,
) -> None:
    docs = tuple(
        Document(
            id=f"d{i}",
            text="Ana Ana Ana",
            spans=tuple(Span(start=4 * k, end=4 * k + 3, label="PER") for k in range(n)),
        )
        for i, n in enumerate(spans_per_doc)
    )
    report = tmp_path / "site_report.json"
    report.write_text(json.dumps({"synthetic": {"token_f1": f1}} if f1 is not None else {}))
    assert len(degenerate_findings(Corpus(documents=docs), report, settings)) == n_findings
