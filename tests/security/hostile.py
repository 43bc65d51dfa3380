"""A hostile site's tools for the security tables: a Grid whose chosen nodes answer with
crafted content, and bundles re-signed the way a site holding its own key can."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flwr.app import Message, RecordDict
from flwr.clientapp import ClientApp

from coordinator.verified_bundle import VerifiedBundle
from protocol import Corpus
from protocol.export import ExportManifest
from protocol.rounds import AcceptedBundle
from shared.corpus_io.jsonl import write_jsonl
from shared.provenance import sha256_bytes
from tests.bundles import forge
from tests.coordinator.fake_grid import InProcessGrid

# what a hostile node answers to the coordinator's message (None: the honest answer stands)
Responder = Callable[[Message, Message | None], RecordDict | None]


class HostileGrid(InProcessGrid):
    """Nodes answer through the real ClientApp; a node in ``hostile`` answers instead with
    what its responder builds from the coordinator's message (and the honest reply)."""

    def __init__(
        self,
        app: ClientApp | None,
        node_configs: dict[int, dict[str, Any]],
        hostile: dict[int, Responder],
    ) -> None:
        super().__init__(app or ClientApp(), node_configs)
        self.hostile = hostile

    def reply_to(self, message: Message) -> Message | None:
        node = message.metadata.dst_node_id
        honest = self.app(message, self.context(node)) if self.node_configs.get(node) else None
        crafted = self.hostile[node](message, honest) if node in self.hostile else None
        return Message(crafted, reply_to=message) if crafted is not None else honest


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def manifest_of(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def replace_artifact(bundle: Path, kind: str, data: bytes, key: Path) -> None:
    """Swap the artifact of ``kind`` for ``data`` and re-sign the manifest listing it."""
    name = next(a["name"] for a in manifest_of(bundle)["artifacts"] if a["kind"] == kind)
    (bundle / name).write_bytes(data)

    def change(manifest: dict[str, Any]) -> None:
        entry = next(a for a in manifest["artifacts"] if a["kind"] == kind)
        entry.update(sha256=sha256_bytes(data), size_bytes=len(data))

    forge(bundle, change, key)


def replace_corpus(bundle: Path, corpus: Corpus | bytes, key: Path) -> None:
    """A new synthetic corpus with an audit report and record re-pointed at it, re-signed:
    everything a site that controls its key can forge."""
    if isinstance(corpus, Corpus):
        write_jsonl(corpus, bundle.parent / "new.jsonl")
        data = (bundle.parent / "new.jsonl").read_bytes()
    else:
        data = corpus
    n = sum(1 for line in data.split(b"\n") if line.strip())
    audit = json.loads((bundle / "audit.json").read_text(encoding="utf-8"))
    audit.update(
        audited_corpus_sha256=sha256_bytes(data),
        n_input_documents=n,
        n_kept_documents=n,
        dropped_documents=[],
    )
    report = json.dumps(audit).encode()
    (bundle / "audit.json").write_bytes(report)
    corpus_name = next(
        a["name"] for a in manifest_of(bundle)["artifacts"] if a["kind"] == "synthetic_corpus"
    )
    (bundle / corpus_name).write_bytes(data)

    def change(manifest: dict[str, Any]) -> None:
        for entry in manifest["artifacts"]:
            if entry["kind"] == "synthetic_corpus":
                entry.update(sha256=sha256_bytes(data), size_bytes=len(data))
            if entry["kind"] == "audit_report":
                entry.update(sha256=sha256_bytes(report), size_bytes=len(report))
        manifest["audit"].update(
            corpus_sha256=sha256_bytes(data), report_sha256=sha256_bytes(report)
        )
        manifest["n_documents"] = n
        if manifest.get("trained_on_corpus_sha256"):
            manifest["trained_on_corpus_sha256"] = sha256_bytes(data)
        for entry in manifest["artifacts"]:
            if entry["kind"] == "site_report":  # the site report names the new corpus too
                entry.update(sha256=sha256_bytes(site_report), size_bytes=len(site_report))

    site_report = b""
    for entry in manifest_of(bundle)["artifacts"]:
        if entry["kind"] == "site_report":
            values = json.loads((bundle / entry["name"]).read_text(encoding="utf-8"))
            values["trained_on_corpus_sha256"] = sha256_bytes(data)
            site_report = json.dumps(values).encode()
            (bundle / entry["name"]).write_bytes(site_report)
    forge(bundle, change, key)


def add_encoder(bundle: Path, files: dict[str, bytes], key: Path) -> None:
    """``encoder/<name>`` files listed as encoder weights, trained on the audited corpus."""
    from tests.bundles import entry_for

    manifest = manifest_of(bundle)
    entries = [entry_for(bundle, f"encoder/{n}", "encoder_weights", d) for n, d in files.items()]

    def change(m: dict[str, Any]) -> None:
        m["artifacts"] = [*m["artifacts"], *entries]
        m["trained_on_corpus_sha256"] = manifest["audit"]["corpus_sha256"]

    forge(bundle, change, key)


def verified_stub(site: str, n_documents: int) -> VerifiedBundle:
    """What collect keeps of a verified bundle of ``n_documents``, for the aggregate phase."""
    accepted = AcceptedBundle(
        site_id=site,
        manifest_sha256="0" * 64,
        signer_key_id="k",
        artifacts={},
        n_documents=n_documents,
        labels=("PER",),
        audit_passed=True,
        created_at="2026-01-01T00:00:00Z",  # type: ignore[arg-type]
    )
    return VerifiedBundle(ExportManifest.model_construct(), accepted, None, {})
