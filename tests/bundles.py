"""Bundles for tests: good ones from the real ``build_bundle``, bad ones as an attacker makes them.

``good_bundle`` runs the real audit on a small synthetic corpus against a small real one, then
the pipeline's export (gate bound to those files, copy, hash, sign, self-verify). ``forge``
rewrites a bundle's manifest (any JSON, unsafe names included) and re-signs it with a given
key, as a site that controls its own signing key could; ``raw_received`` packs a folder the
way a tampering site would, without the site-side verifier, so the coordinator's checks are
what is tested.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coordinator.collect.verify import ReceivedBundle
from protocol import Corpus, Document, Span
from shared.corpus_io import write_corpus
from shared.provenance import sha256_file
from shared.signing import generate_signing_key, key_id, load_private_key, sign
from shared.transport import safetensors_bytes_to_record
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.export.bundle import TRAINED_ON_KEY, BundleRequest, build_bundle, write_trained_on
from site_agent.export.gate import AuditBinding
from tests.site_agent.audit.builders import random_corpus


@dataclass(frozen=True)
class SiteKeys:
    private: Path
    public: Path
    key_id: str


def site_keys(folder: Path, name: str = "site") -> SiteKeys:
    kid = generate_signing_key(folder / f"{name}.key.pem", folder / f"{name}.pub.pem")
    return SiteKeys(folder / f"{name}.key.pem", folder / f"{name}.pub.pem", kid)


def synthetic_corpus(n: int = 3) -> Corpus:
    names = ("Ana Ruiz", "Luis Vidal", "Sara Castro", "Hugo Ortega")
    documents = []
    for i in range(n):
        name = names[i % len(names)]
        text = f"Dr {name} saw the patient on day {i}."
        documents.append(
            Document(
                id=f"syn-{i}", text=text, spans=(Span(start=3, end=3 + len(name), label="PER"),)
            )
        )
    return Corpus(documents=tuple(documents))


REAL = Corpus(
    documents=(
        Document(
            id="MRN-4711-smith",  # a real id that is itself an identifier
            text="Paciente Ernesto Rivera Bueno ingresa por dolor abdominal.",
            spans=(Span(start=9, end=29, label="PER"),),
        ),
        *random_corpus(4, 3, "r", words=30).documents,  # BM25 needs terms that are rare
    )
)


def good_bundle(
    root: Path,
    site_id: str,
    keys: SiteKeys,
    *,
    n_documents: int = 3,
    encoder_dir: Path | None = None,
    site_report: dict[str, Any] | None = None,
) -> Path:
    """A bundle the real export built and signed, after a real audit of its corpus."""
    work = root / f"{site_id}-work"
    write_corpus(REAL, work / "train.jsonl")
    synthetic = synthetic_corpus(n_documents)
    write_corpus(synthetic, work / "synthetic.jsonl")
    report = run_audit(REAL, synthetic, AuditPolicy(), work / "audit")
    corpus = work / "audit" / AUDITED_CORPUS
    assert report.passed and report.n_kept_documents == n_documents, report.failed_rules
    trained_on = sha256_file(corpus)
    if encoder_dir is not None:
        write_trained_on(encoder_dir, trained_on)
    report_path = None
    if site_report is not None:
        report_path = work / "site_report.json"
        values = {**site_report, TRAINED_ON_KEY: trained_on}
        report_path.write_text(json.dumps(values), encoding="utf-8")
    bundle, _ = build_bundle(
        BundleRequest(
            site_id=site_id,
            corpus_path=corpus,
            audit_report_path=work / "audit" / "audit.json",
            signing_key_path=keys.private,
            outbox=root / f"{site_id}-outbox",
            config_digest="test",
            base_models={"generator": "tiny"},
            binding=AuditBinding(
                real=work / "train.jsonl", synthetic=work / "synthetic.jsonl", policy={}
            ),
            synthetic_encoder_dir=encoder_dir,
            site_report_path=report_path,
        )
    )
    return bundle


def forge(bundle: Path, change: Callable[[dict[str, Any]], None], key: Path) -> None:
    """Edit the manifest as JSON (no validation) and sign it with ``key``."""
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    change(manifest)
    data = json.dumps(manifest).encode("utf-8")
    (bundle / "manifest.json").write_bytes(data)
    (bundle / "manifest.json.sig").write_text(sign(data, load_private_key(key)), encoding="ascii")


def entry_for(bundle: Path, name: str, kind: str, data: bytes) -> dict[str, Any]:
    """Write ``data`` at ``name`` (no checks) and return its manifest entry."""
    from shared.provenance import sha256_bytes

    target = bundle / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return {"name": name, "kind": kind, "sha256": sha256_bytes(data), "size_bytes": len(data)}


def raw_received(bundle: Path) -> ReceivedBundle:
    """Every file of the folder as a tampering site would send it (safetensors as arrays)."""
    received = ReceivedBundle(
        manifest_bytes=(bundle / "manifest.json").read_bytes(),
        signature=(bundle / "manifest.json.sig").read_text(encoding="ascii").strip(),
    )
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        name = path.relative_to(bundle).as_posix()
        if name in ("manifest.json", "manifest.json.sig"):
            continue
        if name.endswith(".safetensors"):
            try:
                received.weights[name] = safetensors_bytes_to_record(path.read_bytes())
                continue
            except Exception:
                pass
        received.files[name] = path.read_bytes()
    return received


def public_key_id(keys: SiteKeys) -> str:
    return key_id(load_private_key(keys.private).public_key())


def collect_reply(
    received: ReceivedBundle, instruction: Any = None, key: Path | None = None
) -> Any:
    """The collect reply a site sends for ``received`` (a RecordDict), with the nonce of the
    coordinator's ``instruction`` message signed by ``key`` when both are given."""
    from flwr.app import ConfigRecord, RecordDict

    from protocol.export import MANIFEST, SIGNATURE
    from shared import wire
    from shared.freshness import REPLY_SIGNATURE, sign_collect_reply

    files: dict[str, Any] = {MANIFEST: received.manifest_bytes, SIGNATURE: received.signature}
    content = RecordDict()
    for name, data in received.files.items():
        files[wire.FILE_PREFIX + name] = data
    for name, (record, header) in received.weights.items():
        content[wire.WEIGHTS_PREFIX + name] = record
        files[wire.HEADER_PREFIX + name] = header
    if instruction is not None and key is not None and wire.PAYLOAD in instruction.content:
        from protocol.rounds import CollectInstruction

        nonce = wire.unpack(instruction.content, CollectInstruction).nonce
        files[REPLY_SIGNATURE] = sign_collect_reply(
            nonce, received.manifest_bytes, load_private_key(key)
        )
    content[wire.BUNDLE] = ConfigRecord(files)
    return content
