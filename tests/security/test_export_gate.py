"""Security issue 11: the export gate is bound to this site's own data, policy and files.

Each case is an attack that went through before: an audit of other data, an edited
``audit.json``, forged hashes, files swapped behind ``stage.json``. Every one must now be
refused by a named rule (gate cases) or make the stage run again (pipeline cases).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus, Document
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import ExportRefusedError
from shared.provenance import sha256_file
from shared.signing import generate_signing_key
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.seal import seal_key, write_seal
from site_agent.config import SiteConfig, build_site_config
from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.export.gate import AuditBinding
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.pipeline import run_pipeline
from tests.site_agent.audit.builders import random_corpus

REAL = random_corpus(5, 12, "r", words=40)
LEAK = Document(id="leak", text=REAL.documents[0].text, spans=REAL.documents[0].spans)
SYNTHETIC = Corpus(documents=(*random_corpus(6, 6, "s", words=40, other=True).documents, LEAK))
# Documents that share nothing with the site's notes: an audit against them passes anything.
UNRELATED = Corpus(
    documents=tuple(
        Document(id=f"u{i}", text=" ".join(f"lorem{i}x{j}" for j in range(30))) for i in range(5)
    )
)
NO_FILTERS: dict[str, Any] = {"filters": {"enabled": []}}


@dataclass(frozen=True)
class Site:
    root: Path
    train: Path  # split.train
    synthetic: Path  # annotate.corpus
    audit_dir: Path  # 07-audit

    @property
    def report(self) -> Path:
        return self.audit_dir / "audit.json"

    @property
    def corpus(self) -> Path:
        return self.audit_dir / AUDITED_CORPUS

    def edit_report(self, edit: Callable[[dict[str, Any]], None]) -> None:
        data = json.loads(self.report.read_text())
        edit(data)
        self.report.write_text(json.dumps(data))


@pytest.fixture
def site(tmp_path: Path) -> Site:
    made = Site(tmp_path, tmp_path / "train.jsonl", tmp_path / "synthetic.jsonl", tmp_path / "a")
    write_corpus(REAL, made.train)
    write_corpus(SYNTHETIC, made.synthetic)
    generate_signing_key(tmp_path / "k.pem", tmp_path / "k.pub.pem")
    return made


def _export(site: Site, policy: dict[str, Any], seal: bytes | None = None) -> Path:
    request = BundleRequest(
        site_id="h1",
        corpus_path=site.corpus,
        audit_report_path=site.report,
        signing_key_path=site.root / "k.pem",
        outbox=site.root / "outbox",
        config_digest="abc",
        base_models={},
        binding=AuditBinding(
            real=site.train, synthetic=site.synthetic, policy=policy, seal_key=seal
        ),
    )
    return build_bundle(request)[0]


# --- the attacks: each sets up the audit folder and returns the site's own policy ---------


def honest(site: Site) -> dict[str, Any]:
    run_audit(REAL, SYNTHETIC, AuditPolicy(), site.audit_dir)
    return {}


def wrong_real_training_split_as_synthetic(site: Site) -> dict[str, Any]:
    """The probe: ``audit --real <unrelated> --synthetic <the site's training split>``."""
    run_audit(UNRELATED, read_corpus(site.train), AuditPolicy(), site.audit_dir)
    return {}


def wrong_real_own_synthetic(site: Site) -> dict[str, Any]:
    """The right synthetic corpus audited against other real text: the copied note stays."""
    run_audit(UNRELATED, SYNTHETIC, AuditPolicy(), site.audit_dir)
    return {}


def other_policy(site: Site) -> dict[str, Any]:
    """Audited under a laxer policy than the site's (filters off, thresholds relaxed)."""
    lax = AuditPolicy.model_validate(
        {**NO_FILTERS, "rules": [{"name": "anything", "metric": "corpus.kept_documents",
                                  "comparison": ">=", "threshold": 0}]}
    )  # fmt: skip
    run_audit(REAL, SYNTHETIC, lax, site.audit_dir)
    return {}


def _failing(site: Site) -> None:
    run_audit(REAL, SYNTHETIC, AuditPolicy.model_validate(NO_FILTERS), site.audit_dir)


def _pass_every_rule(data: dict[str, Any], field: str) -> None:
    for rule in data["rules"]:
        if not rule["passed"]:
            if field == "threshold":
                rule["comparison"], rule["threshold"] = ">=", 0.0
            elif field == "measured":
                rule["measured"] = rule["threshold"]
            rule["passed"] = True
    data["passed"] = True


def threshold_edited_verdict_true(site: Site) -> dict[str, Any]:
    _failing(site)
    site.edit_report(lambda d: _pass_every_rule(d, "threshold"))
    return NO_FILTERS


def threshold_edited_in_rules_and_policy(site: Site) -> dict[str, Any]:
    _failing(site)

    def edit(data: dict[str, Any]) -> None:
        _pass_every_rule(data, "threshold")
        data["policy"]["rules"] = [
            {**r, "comparison": ">=", "threshold": 0.0} for r in data["policy"]["rules"]
        ]

    site.edit_report(edit)
    return NO_FILTERS


def measured_value_edited(site: Site) -> dict[str, Any]:
    _failing(site)
    site.edit_report(lambda d: _pass_every_rule(d, "measured"))
    return NO_FILTERS


def verdict_flipped(site: Site) -> dict[str, Any]:
    _failing(site)
    site.edit_report(lambda d: _pass_every_rule(d, "passed"))
    return NO_FILTERS


def corpus_and_its_hash_edited(site: Site) -> dict[str, Any]:
    """A real note appended to the audited corpus, and the report's hash updated to match."""
    honest(site)
    with site.corpus.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "r0", "text": REAL.documents[0].text}) + "\n")
    site.edit_report(lambda d: d.update(audited_corpus_sha256=sha256_file(site.corpus)))
    return {}


def dropped_document_put_back(site: Site) -> dict[str, Any]:
    """The dropped copy restored to the corpus, taken off the dropped list, counts fixed."""
    write_corpus(SYNTHETIC, site.corpus)

    def edit(data: dict[str, Any]) -> None:
        data.update(audited_corpus_sha256=sha256_file(site.corpus), dropped_documents=[])
        data["n_kept_documents"] = len(SYNTHETIC)
        data["measures"]["corpus"]["after"]["kept_documents"] = len(SYNTHETIC)
        data["rules"] = [
            {**r, "measured": len(SYNTHETIC)} if r["name"] == "kept_documents" else r
            for r in data["rules"]
        ]

    site.edit_report(edit)
    return {}


def real_hash_forged(site: Site) -> dict[str, Any]:
    """The probe's report with ``real_corpus_sha256`` set to what the site's split hashes to."""
    truth = json.loads(site.report.read_text())["real_corpus_sha256"]
    wrong_real_own_synthetic(site)
    site.edit_report(lambda d: d.update(real_corpus_sha256=truth))
    return {}


GATE_CASES: list[Any] = [
    (wrong_real_training_split_as_synthetic, "audit_real_corpus"),
    (wrong_real_own_synthetic, "audit_real_corpus"),
    (other_policy, "audit_settings"),
    (threshold_edited_verdict_true, "audit_verdict"),
    (threshold_edited_in_rules_and_policy, "audit_settings"),
    (measured_value_edited, "audit_verdict"),
    (verdict_flipped, "audit_report_valid"),  # each rule judged again on its own figure
    (corpus_and_its_hash_edited, "audit_document_accounting"),
    # A hand-edited report whose hashes, lists and figures all agree with each other passes
    # this layer (re-measuring would mean re-auditing); the seal below refuses it.
]


def _name(case: Any) -> str:
    return str((case.values if hasattr(case, "values") else case)[0].__name__)


@pytest.mark.parametrize(("attack", "rule"), GATE_CASES, ids=[_name(c) for c in GATE_CASES])
def test_export_gate_refuses(
    site: Site, attack: Callable[[Site], dict[str, Any]], rule: str
) -> None:
    policy = attack(site)
    with pytest.raises(ExportRefusedError, match=f"rule '({rule})'") as refused:
        _export(site, policy)
    assert "fix:" in str(refused.value) and refused.value.exit_code == 4
    assert not (site.root / "outbox").exists()


def _export_sealed(site: Site, policy: dict[str, Any], key: Path | None = None) -> Path:
    """Export as the pipeline does: the binding carries the site's audit sealing key."""
    return _export(site, policy, seal=seal_key(key or site.root / "k.pem"))


def _sealed_by_the_audit_stage(site: Site) -> None:
    report = json.loads(site.report.read_text())
    write_seal(site.report, report["audited_corpus_sha256"], seal_key(site.root / "k.pem"))


def sealed_then_dropped_document_put_back(site: Site) -> dict[str, Any]:
    honest(site)
    _sealed_by_the_audit_stage(site)
    return dropped_document_put_back(site)


def sealed_then_real_hash_forged(site: Site) -> dict[str, Any]:
    honest(site)
    _sealed_by_the_audit_stage(site)
    return real_hash_forged(site)  # the probe's audit over the sealed folder, hash forged


def unsealed_cli_audit(site: Site) -> dict[str, Any]:
    """``site-agent audit`` output (honest figures even): never sealed, never exportable."""
    honest(site)
    return {}


def sealed_with_another_sites_key(site: Site) -> dict[str, Any]:
    honest(site)
    generate_signing_key(site.root / "other.pem", site.root / "other.pub.pem")
    report = json.loads(site.report.read_text())
    write_seal(site.report, report["audited_corpus_sha256"], seal_key(site.root / "other.pem"))
    return {}


def sealed_then_one_byte_changed(site: Site) -> dict[str, Any]:
    honest(site)
    _sealed_by_the_audit_stage(site)
    site.report.write_text(site.report.read_text() + " ")
    return {}


SEALED_CASES = [
    sealed_then_dropped_document_put_back,
    sealed_then_real_hash_forged,
    unsealed_cli_audit,
    sealed_with_another_sites_key,
    sealed_then_one_byte_changed,
]


@pytest.mark.parametrize("attack", SEALED_CASES, ids=[c.__name__ for c in SEALED_CASES])
def test_a_report_the_audit_stage_did_not_seal_is_refused(
    site: Site, attack: Callable[[Site], dict[str, Any]]
) -> None:
    """What the re-derivation layer cannot see (forged figures that agree with each other),
    the seal refuses: only the bytes this site's audit stage wrote clear an export."""
    policy = attack(site)
    with pytest.raises(ExportRefusedError, match="rule 'audit_seal'"):
        _export_sealed(site, policy)
    assert not (site.root / "outbox").exists()


def test_the_sealed_honest_audit_exports(site: Site) -> None:
    honest(site)
    _sealed_by_the_audit_stage(site)
    assert (_export_sealed(site, {}) / "manifest.json").is_file()


def test_the_honest_audit_still_exports_and_lists_what_it_dropped(site: Site) -> None:
    honest(site)
    bundle = _export(site, {})
    shipped = json.loads((bundle / "audit.json").read_text())
    assert shipped["dropped_documents"] == [{"id": "leak", "reasons": list(_reasons(site))}]
    assert shipped["dropped_documents"][0]["reasons"][0] == "exact_duplicate_real"
    assert REAL.documents[0].text not in (bundle / "audit.json").read_text()


def _reasons(site: Site) -> tuple[str, ...]:
    (dropped,) = json.loads(site.report.read_text())["dropped_documents"]
    assert dropped["id"] == "leak"
    return tuple(dropped["reasons"])


# --- the work dir: stage.json is a claim, the files on disk are the truth ------------------


def _make(ctx: StageContext) -> StageOutput:
    out = ctx.stage_dir / "corpus.jsonl"
    out.write_text(ctx.config.corpus.path.read_text())
    return StageOutput(artifacts={"corpus": out})


def _audit(ctx: StageContext) -> StageOutput:
    corpus, report = ctx.stage_dir / AUDITED_CORPUS, ctx.stage_dir / "audit.json"
    corpus.write_text(ctx.inputs["make.corpus"].read_text())
    report.write_text(json.dumps({"audited_corpus_sha256": sha256_file(corpus)}))
    return StageOutput(artifacts={"corpus": corpus, "report": report})


def _ship(ctx: StageContext) -> StageOutput:
    out = ctx.stage_dir / "shipped.jsonl"
    audited = json.loads(ctx.inputs["audit.report"].read_text())["audited_corpus_sha256"]
    if sha256_file(ctx.inputs["audit.corpus"]) != audited:
        raise ExportRefusedError("not the audited corpus; fix: re-run the audit")
    out.write_text(ctx.inputs["audit.corpus"].read_text())
    return StageOutput(artifacts={"shipped": out})


TOY = (
    Stage("make", _make, lambda c: {}, sources=lambda c: {"gold": c.corpus.path}),
    Stage("audit", _audit, lambda c: {}, inputs=("make.corpus",)),
    Stage("export", _ship, lambda c: {}, inputs=("audit.corpus", "audit.report")),
)
SWAPPED = '{"id": "r0", "text": "a real note"}\n'


@pytest.fixture
def config(tmp_path: Path) -> SiteConfig:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "s0", "text": "a synthetic note"}\n')
    generate_signing_key(tmp_path / "toy.pem", tmp_path / "toy.pub.pem")  # export is in TOY
    return build_site_config(
        {
            "site_id": "toy",
            "corpus": {"path": str(gold)},
            "work_dir": str(tmp_path / "w"),
            "signing_key": str(tmp_path / "toy.pem"),
        }
    )


def _swap_audited_corpus_and_report(work: Path) -> None:
    """The probe's move: a new corpus and a report naming its hash; stage.json left alone."""
    corpus = work / "02-audit" / AUDITED_CORPUS
    corpus.write_text(SWAPPED)
    (work / "02-audit" / "audit.json").write_text(
        json.dumps({"audited_corpus_sha256": sha256_file(corpus)})
    )


def _swap_first_corpus(work: Path) -> None:
    (work / "01-make" / "corpus.jsonl").write_text(SWAPPED)


def _forge_recorded_hash(work: Path) -> None:
    """stage.json edited to name a hash that no file on disk has."""
    record = work / "02-audit" / "stage.json"
    data = json.loads(record.read_text())
    data["artifact_hashes"]["corpus"] = "0" * 64
    record.write_text(json.dumps(data))


WORK_DIR_CASES = [
    (_swap_audited_corpus_and_report, ["skipped", "ran", "ran"]),
    (_swap_first_corpus, ["ran", "skipped", "ran"]),  # re-made identical: audit still valid
    (_forge_recorded_hash, ["skipped", "ran", "ran"]),
]


@pytest.mark.parametrize(
    ("tamper", "statuses"), WORK_DIR_CASES, ids=[c[0].__name__ for c in WORK_DIR_CASES]
)
def test_a_file_changed_behind_stage_json_reruns_its_stage(
    config: SiteConfig, tamper: Callable[[Path], None], statuses: list[str]
) -> None:
    run_pipeline(config, TOY)
    tamper(config.work_dir)
    runs = run_pipeline(config, TOY, from_stage="export")
    assert [r.status for r in runs] == statuses
    shipped = (config.work_dir / "03-export" / "shipped.jsonl").read_text()
    assert shipped == config.corpus.path.read_text() and "real note" not in shipped


def test_an_untouched_work_dir_is_still_skipped(config: SiteConfig) -> None:
    run_pipeline(config, TOY)
    assert [r.status for r in run_pipeline(config, TOY)] == ["skipped"] * 3


def test_export_refuses_a_training_split_that_is_not_the_gold_corpus_split(
    tmp_path: Path,
) -> None:
    from site_agent.stages import split as split
    from site_agent.stages.export import audit_binding

    gold = tmp_path / "gold.jsonl"
    write_corpus(random_corpus(2, 30, "g", words=20), gold)
    config = build_site_config(
        {"site_id": "x", "corpus": {"path": str(gold)}, "work_dir": str(tmp_path / "w")}
    )
    files = split.write_splits(config.corpus, config.split, tmp_path)
    write_corpus(UNRELATED, files.train)  # swapped; its stage.json hash forged to match
    inputs = {"split.train": files.train}
    with pytest.raises(ExportRefusedError, match=r"rule 'training_split'.*fix:"):
        audit_binding(config, inputs)
