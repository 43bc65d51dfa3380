"""The audit stage: it passes the site's policy, surrogates and tokenizer to the audit, stops
the pipeline on a failed audit and returns the report with the corpus it covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document
from protocol.audit import AuditReport, RuleResult
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import QualityGateError
from shared.provenance import sha256_file
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.settings import AuditSettings
from site_agent.config import SiteConfig, build_site_config
from site_agent.pipeline.stage import StageContext
from site_agent.pseudonymise.records import SurrogateRecord, write_surrogates
from site_agent.stages import audit as audit_stage


def _corpus(n: int, prefix: str) -> Corpus:
    return Corpus(documents=tuple(Document(id=f"{prefix}{i}", text=f"Note {i}.") for i in range(n)))


@pytest.fixture
def audit_inputs(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for key in ("split.train", "annotate.corpus"):
        paths[key] = tmp_path / f"{key}.jsonl"
        write_corpus(_corpus(3, prefix=key[:2]), paths[key])
    paths["pseudonymise.surrogates"] = tmp_path / "surrogates.jsonl"
    write_surrogates(
        [SurrogateRecord(doc_id="d0", label="PER", original="Ana", surrogate="Eva")],
        paths["pseudonymise.surrogates"],
    )
    paths["pseudonymise.canaries"] = tmp_path / "canaries.json"
    paths["pseudonymise.canaries"].write_text("")
    paths["pseudonymise.membership_canaries"] = tmp_path / "membership_canaries.json"
    paths["pseudonymise.membership_canaries"].write_text("")
    return paths


@pytest.fixture(autouse=True)
def _no_model_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit_stage, "tokenizer_reference", lambda config: "tok")


def _ctx(tmp_path: Path, inputs: dict[str, Path]) -> StageContext:
    config: SiteConfig = build_site_config({"site_id": "x", "corpus": {"path": "c.jsonl"}})
    folder = tmp_path / "audit"
    folder.mkdir()
    return StageContext(config, folder, inputs)


def _fake_audit(passed: bool):  # type: ignore[no-untyped-def]
    def run(  # type: ignore[no-untyped-def]
        real,
        synthetic,
        policy,
        out_dir,
        *,
        extra_pii_surfaces,
        canaries,
        membership_canaries,
        tokenizer,
        chunk_documents,
    ):
        assert extra_pii_surfaces == [("PER", "Eva")] and canaries is None and tokenizer == "tok"
        assert membership_canaries is None
        assert policy == AuditPolicy()
        assert chunk_documents == AuditSettings().chunk_documents
        synthetic = read_corpus(synthetic)  # the stage passes the file: it is read in chunks
        kept = out_dir / "synthetic.audited.jsonl"
        write_corpus(synthetic, kept)
        return AuditReport(
            tool_version="t",
            config_digest="c",
            real_corpus_sha256="r",
            input_corpus_sha256="i",
            audited_corpus_sha256=sha256_file(kept),
            n_input_documents=len(synthetic),
            n_kept_documents=len(synthetic),
            rules=(
                RuleResult(
                    name="pii_echo", measured=0.0 if passed else 3.0, threshold=0.0, passed=passed
                ),
            ),
            passed=passed,
        )

    return run


def test_audit_stage_fails_the_pipeline_on_a_failed_audit(
    tmp_path: Path, audit_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_stage, "run_audit", _fake_audit(passed=False))
    with pytest.raises(QualityGateError, match="pii_echo"):
        audit_stage.STAGE.run(_ctx(tmp_path, audit_inputs))


def test_audit_stage_returns_the_report_and_the_audited_corpus(
    tmp_path: Path, audit_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_stage, "run_audit", _fake_audit(passed=True))
    out = audit_stage.STAGE.run(_ctx(tmp_path, audit_inputs))
    report = AuditReport.model_validate_json(out.artifacts["report"].read_text())
    assert sha256_file(out.artifacts["corpus"]) == report.audited_corpus_sha256
