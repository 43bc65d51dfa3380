"""Template sites for the coordinator's tests: notes, bundles, keys, annotators, cheaply.

(``coordinator demo`` federates real site runs; see site_agent/demo/sites.py.)

Each site writes notes in its own style and with its own label names (mapped onto one coarse
scheme by ``demo_mapping``), holds a gold test split and a gold-trained annotator, and has a
signed export bundle whose synthetic corpus comes from a different random stream.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from coordinator.deployment.keys import register_site
from coordinator.deployment.local import LocalSite
from coordinator.settings import FederationSettings
from protocol import Corpus, Document, LabelMapping, Span
from protocol.audit import AuditReport, RuleResult
from shared.atomic import atomic_write_text
from shared.corpus_io.jsonl import write_jsonl
from shared.provenance import config_digest, sha256_file, tool_version
from shared.signing import generate_signing_key
from shared.supernode_keys import create_supernode_auth_key
from site_agent.models.tiny import tiny_encoder

if TYPE_CHECKING:
    from site_agent.export.gate import AuditBinding

FIRST = ("Ana", "Luis", "Marta", "Jorge", "Lucia", "Pablo", "Elena", "Diego", "Sara", "Hugo")
LAST = ("Garcia", "Lopez", "Navarro", "Ruiz", "Moreno", "Castro", "Ortega", "Vidal")
PLACES = ("Madrid", "Sevilla", "Bilbao", "Valencia", "Zaragoza", "Murcia")
HOSPITALS = ("Hospital Central", "Clinica Norte", "Hospital del Mar", "Centro Sur")


@dataclass(frozen=True)
class SiteStyle:
    """Label names this site uses for person, date, place, organisation and identifier."""

    person: str
    date: str
    place: str
    org: str
    ident: str


STYLES = {
    "site-a": SiteStyle("PATIENT", "DATE", "CITY", "HOSPITAL", "RECORD_ID"),
    "site-b": SiteStyle("NAME", "DATE", "LOCATION", "ORGANIZATION", "ID"),
    "site-c": SiteStyle("PER", "TIME", "LOC", "ORG", "ID"),
}


def demo_mapping() -> LabelMapping:
    mapping = {}
    for style in STYLES.values():
        mapping.update(
            {style.person: "PER", style.date: "TIME", style.place: "LOC", style.org: "ORG"}
        )
        mapping[style.ident] = "ID"
    return LabelMapping(
        name="demo-coarse", coarse_labels=("PER", "TIME", "LOC", "ORG", "ID"), mapping=mapping
    )


def _note(rng: random.Random, style: SiteStyle, doc_id: str) -> Document:
    pieces: list[tuple[str, str | None]] = [
        ("Paciente ", None),
        (f"{rng.choice(FIRST)} {rng.choice(LAST)}", style.person),
        (" ingresa el ", None),
        (f"{rng.randint(1, 28)}/{rng.randint(1, 12)}/20{rng.randint(10, 24)}", style.date),
        (" en ", None),
        (rng.choice(HOSPITALS), style.org),
        (" de ", None),
        (rng.choice(PLACES), style.place),
        (". Historia ", None),
        (f"{rng.randint(100000, 999999)}", style.ident),
        (". Refiere dolor toracico y fiebre.", None),
    ]
    text, spans = "", []
    for piece, label in pieces:
        if label:
            spans.append(Span(start=len(text), end=len(text) + len(piece), label=label))
        text += piece
    return Document(id=doc_id, text=text, spans=tuple(spans))


def style_of(site_id: str) -> SiteStyle:
    """The site's own style, or one of the built-in ones chosen by the site id."""
    if site_id in STYLES:
        return STYLES[site_id]
    names = sorted(STYLES)
    return STYLES[names[sum(site_id.encode()) % len(names)]]


def demo_corpus(site_id: str, n: int, seed: int, prefix: str) -> Corpus:
    rng = random.Random(f"{site_id}/{seed}/{prefix}")
    style = style_of(site_id)
    return Corpus(documents=tuple(_note(rng, style, f"{prefix}-{i}") for i in range(n)))


@dataclass(frozen=True)
class DemoSite:
    site_id: str
    site_dir: Path
    signing_public_key: Path
    signing_key_id: str


def demo_audit(corpus_path: Path, out: Path, real_path: Path) -> AuditBinding:
    """A passing ``audit.json`` for a demo corpus, bound (as the export gate requires) to the
    demo's real training file and a one-rule demo policy; returns that binding. The real
    audit stage measures; the demo's template notes are drawn from a separate random stream
    than its test notes."""
    from shared.corpus_io import read_corpus
    from site_agent.audit.corpus_audit import audit_settings_digest
    from site_agent.audit.policy import AuditPolicy, FilterSettings, PolicyRule
    from site_agent.export.gate import AuditBinding
    from site_agent.privacy.digest import corpus_sha256

    rule = PolicyRule(name="demo_ngram_recall", metric="ngram_recall.words.3.recall", threshold=0.1)
    policy = AuditPolicy(
        name="demo", measures=(), filters=FilterSettings(enabled=()), rules=(rule,)
    )
    synthetic = read_corpus(corpus_path, "jsonl")
    n = len(synthetic)
    figures = {  # a figure the ngram_recall measure declares (a rule may name no other)
        "ngram_recall": {"words": {"3": {"recall": 0.0}}},
        "corpus": {"input_documents": n, "kept_documents": n},
    }
    report = AuditReport(
        tool_version=tool_version(),
        config_digest=audit_settings_digest(policy, None, (), None),
        real_corpus_sha256=corpus_sha256(read_corpus(real_path, "jsonl")),
        input_corpus_sha256=corpus_sha256(synthetic),
        audited_corpus_sha256=sha256_file(corpus_path),
        n_input_documents=n,
        n_kept_documents=n,
        measures={name: {"before": v, "after": v} for name, v in figures.items()},
        rules=(
            RuleResult(
                name=rule.name, metric=rule.metric, measured=0.0, threshold=0.1, passed=True
            ),
        ),
        policy_name=policy.name,
        policy=policy.model_dump(mode="json"),
        passed=True,
    )
    atomic_write_text(out, report.model_dump_json(indent=2))
    return AuditBinding(
        real=real_path, synthetic=corpus_path, policy=policy.model_dump(mode="json")
    )


def write_stage_record(stage_dir: Path, stage: str, artifacts: dict[str, str]) -> None:
    """The part of a pipeline ``stage.json`` the federation reads (stage, status, artifacts
    relative to ``stage_dir``), so the ClientApp finds a demo site's files as a real one's."""
    record = {"stage": stage, "status": "completed", "artifacts": artifacts, "summary": {}}
    atomic_write_text(stage_dir / "stage.json", json.dumps(record, indent=2))


# Template test splits are a dozen made-up notes: no figure could hide one mention there, so
# the test sites score everything exactly, at full precision (a real site keeps the safe defaults).
SITE_CONFIG = "site.toml"
OPEN_EVALUATION = """\
[federation.evaluation]
mechanism = "none"
max_models_per_run = 1000
min_support = 0
grid = 0.0
intervals = true
"""


def build_site(
    root: Path,
    site_id: str,
    *,
    n_test: int = 12,
    n_synthetic: int = 24,
    seed: int = 0,
    base_model: Path | None = None,
) -> DemoSite:
    """A site work dir laid out as the pipeline leaves it: held-out test split, signing key
    and a signed bundle in ``outbox/`` built by the pipeline's export (no annotator yet).

    With ``base_model`` the bundle also carries an encoder trained on the synthetic corpus
    (the pipeline's train-synthetic stage), exported as ``encoder/`` files."""
    from site_agent.export.bundle import BundleRequest, build_bundle, write_trained_on

    site_dir = root / site_id
    write_jsonl(demo_corpus(site_id, n_test, seed, "test"), site_dir / "01-split" / "test.jsonl")
    splits = {"train": "train.jsonl", "test": "test.jsonl"}
    write_stage_record(site_dir / "01-split", "split", splits)
    keys = site_dir / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    key_id = generate_signing_key(keys / "signing.key", keys / "signing.pub")
    audit_dir = site_dir / "07-audit"
    synthetic = demo_corpus(site_id, n_synthetic, seed, "synthetic")
    write_jsonl(synthetic, audit_dir / "synthetic.jsonl")
    train = site_dir / "01-split" / "train.jsonl"
    write_jsonl(demo_corpus(site_id, n_synthetic, seed, "train"), train)
    binding = demo_audit(audit_dir / "synthetic.jsonl", audit_dir / "audit.json", train)
    encoder = None
    if base_model is not None:
        encoder = _train(synthetic, base_model, site_dir / "08-train-synthetic" / "model")
        write_trained_on(encoder, sha256_file(audit_dir / "synthetic.jsonl"))
    request = BundleRequest(
        site_id=site_id,
        corpus_path=audit_dir / "synthetic.jsonl",
        audit_report_path=audit_dir / "audit.json",
        signing_key_path=keys / "signing.key",
        outbox=site_dir / "outbox",
        config_digest=config_digest({"demo": site_id}),
        base_models={"encoder": str(base_model)} if base_model else {},
        synthetic_encoder_dir=encoder,
        binding=binding,
    )
    build_bundle(request)
    atomic_write_text(site_dir / SITE_CONFIG, OPEN_EVALUATION)
    return DemoSite(site_id, site_dir, keys / "signing.pub", key_id)


def _train(corpus: Corpus, base_model: Path, out_dir: Path, epochs: int = 12) -> Path:
    from coordinator.aggregate.trainer import NerSettings, train_annotator

    settings = NerSettings(epochs=epochs, learning_rate=1e-3, batch_size=4)
    return train_annotator(corpus, None, base_model, settings, out_dir)


def train_site_annotator(
    site: DemoSite, base_model: Path, *, n_train: int = 24, epochs: int = 12
) -> Path:
    """The site's gold-trained annotator (its own labels), kept where the pipeline keeps it."""
    gold = demo_corpus(site.site_id, n_train, 0, "train")
    model = _train(gold, base_model, site.site_dir / "03-annotator" / "model", epochs)
    write_stage_record(model.parent, "annotator", {"model": model.name})
    return model


def prepare_template_federation(
    work: Path, output_dir: Path, site_ids: list[str]
) -> tuple[list[LocalSite], FederationSettings]:
    """Template sites with keys, registry, mapping and a tiny base encoder for a local run."""
    texts = [d.text for s in site_ids for d in demo_corpus(s, 20, 0, "vocab").documents]
    base = tiny_encoder(work / "base-encoder", texts)
    registry = work / "registry.json"
    sites = []
    for site_id in site_ids:
        site = build_site(work / "sites", site_id, base_model=base)
        train_site_annotator(site, base)
        auth_public = create_supernode_auth_key(site.site_dir / "keys" / "supernode.key")
        register_site(registry, site_id, site.signing_public_key, auth_public)
        keys = site.site_dir / "keys"
        sites.append(
            LocalSite(
                site_id,
                site.site_dir,
                keys / "supernode.key",
                signing_key=keys / "signing.key",
                site_config=site.site_dir / SITE_CONFIG,
            )
        )
    mapping = work / "mapping.json"
    atomic_write_text(mapping, demo_mapping().model_dump_json(indent=2))
    settings = FederationSettings(
        registry=registry,
        base_model=base,
        output_dir=output_dir,
        mapping=mapping,
        fedavg_rounds=3,
        train_epochs=12,
        local_epochs=4,
        learning_rate=1e-3,
        batch_size=4,
        bootstrap=100,
        reply_timeout=300,
    )
    return sites, settings
