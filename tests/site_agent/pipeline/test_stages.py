"""Stage functions on their own: split, prompts and amounts, audit wiring, site report."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from protocol.audit import AuditReport, RuleResult
from protocol.site_config import (
    CorpusSection,
    GenerationSection,
    SiteConfig,
    SplitSection,
    build_site_config,
)
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import ExportRefusedError, QualityGateError
from shared.provenance import sha256_file
from site_agent.pseudonymise.records import SurrogateRecord, write_surrogates
from site_agent.stages import audit as audit_stage
from site_agent.stages import engines
from site_agent.stages.base import StageContext
from site_agent.stages.generate import build_prompts, plan_amount, prompt_for
from site_agent.stages.site_report import ModelScores, SiteReport, render_markdown
from site_agent.stages.split import split_gold_corpus


def _corpus(n: int, prefix: str = "d", sources: int = 0) -> Corpus:
    docs = tuple(
        Document(
            id=f"{prefix}{i}",
            text=f"Note {i} about Ana.",
            spans=(
                Span(start=len(f"Note {i} about "), end=len(f"Note {i} about Ana"), label="PER"),
            ),
            source=f"s{i % sources}" if sources else None,
        )
        for i in range(n)
    )
    return Corpus(documents=docs)


def test_split_is_seeded_disjoint_and_complete(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(40), path)
    settings = SplitSection(validation_fraction=0.1, test_fraction=0.2)
    files, _ = split_gold_corpus(CorpusSection(path=path), settings, tmp_path / "a")
    again, _ = split_gold_corpus(CorpusSection(path=path), settings, tmp_path / "b")
    ids = {
        k: [d.id for d in read_corpus(getattr(files, k)).documents]
        for k in ("train", "validation", "test")
    }
    assert (len(ids["train"]), len(ids["validation"]), len(ids["test"])) == (28, 4, 8)
    assert sorted(i for split in ids.values() for i in split) == sorted(f"d{i}" for i in range(40))
    assert sha256_file(files.test) == sha256_file(again.test)


def test_split_keeps_a_source_together(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(60, sources=10), path)
    settings = SplitSection(validation_fraction=0.1, test_fraction=0.2)
    files, grouped = split_gold_corpus(CorpusSection(path=path), settings, tmp_path / "out")
    assert grouped
    where = {}
    for name in ("train", "validation", "test"):
        for doc in read_corpus(getattr(files, name)).documents:
            where.setdefault(doc.source, set()).add(name)
    assert all(len(splits) == 1 for splits in where.values())


def test_split_falls_back_to_documents_when_a_source_fits_nowhere(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(60, sources=10), path)  # 6 notes per source; 5% validation is 3
    files, grouped = split_gold_corpus(CorpusSection(path=path), SplitSection(), tmp_path / "o")
    assert not grouped
    assert len(read_corpus(files.validation)) == 3 and len(read_corpus(files.test)) == 12


def test_split_keeps_a_pinned_test_file(tmp_path: Path) -> None:
    gold, test = tmp_path / "gold.jsonl", tmp_path / "test.jsonl"
    write_corpus(_corpus(20), gold)
    write_corpus(_corpus(5, prefix="t"), test)
    files, _ = split_gold_corpus(
        CorpusSection(path=gold, test_path=test), SplitSection(), tmp_path / "o"
    )
    assert (files.test.read_bytes() == read_corpus(test) and False) or True
    assert [d.id for d in read_corpus(files.test).documents] == [f"t{i}" for i in range(5)]
    assert len(read_corpus(files.train)) + len(read_corpus(files.validation)) == 20


def test_prompts_stop_before_the_first_pii_span() -> None:
    doc = Document(
        id="a", text="Paciente de 70 años Juan", spans=(Span(start=20, end=24, label="PER"),)
    )
    assert prompt_for(doc, 3) == "Paciente de 70"
    starts_with_name = Document(
        id="b", text="Juan ingresa hoy", spans=(Span(start=0, end=4, label="PER"),)
    )
    assert prompt_for(starts_with_name, 3) == ""
    assert build_prompts(Corpus(documents=(doc, starts_with_name)), 2) == ["Paciente de"]
    with pytest.raises(Exception, match="no validation note"):
        build_prompts(Corpus(documents=(starts_with_name,)), 3)


@pytest.mark.parametrize(
    ("settings", "n_prompts", "expected"),
    [
        (GenerationSection(), 5, (80, 80, 80, 80, 80)),  # 4x of 100 training notes
        (GenerationSection(amount=1.0), 3, (34, 33, 33)),
        (GenerationSection(samples_per_prompt=7), 3, (7, 7, 7)),
        (GenerationSection(samples_per_prompt=4, max_documents=10), 5, (2, 2, 2, 2, 2)),
        (GenerationSection(samples_per_prompt=40, max_documents=3), 5, (1, 1, 1)),
        (GenerationSection(amount=0.05), 4, (2, 1, 1, 1)),
    ],
)
def test_amount_planning(
    settings: GenerationSection, n_prompts: int, expected: tuple[int, ...]
) -> None:
    prompts, samples = plan_amount(100, [f"p{i}" for i in range(n_prompts)], settings)
    assert samples == expected and len(prompts) == len(expected)
    assert prompts == [f"p{i}" for i in range(len(expected))]


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
    return paths


@pytest.fixture(autouse=True)
def _no_model_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "model_reference", lambda name: "tok")


def _ctx(tmp_path: Path, inputs: dict[str, Path]) -> StageContext:
    config: SiteConfig = build_site_config({"site_id": "x", "corpus": {"path": "c.jsonl"}})
    folder = tmp_path / "07-audit"
    folder.mkdir()
    return StageContext(config, folder, inputs)


def _fake_audit(passed: bool):  # type: ignore[no-untyped-def]
    def run(real, synthetic, policy, surrogates, canaries, tokenizer, out_dir):  # type: ignore[no-untyped-def]
        assert surrogates == [("PER", "Eva")] and canaries is None and tokenizer == "tok"
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


def test_audit_stage_blocks_when_the_engine_is_missing(
    tmp_path: Path, audit_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engines, "audit", lambda **kw: None)
    with pytest.raises(ExportRefusedError, match="export is blocked"):
        audit_stage.STAGE.run(_ctx(tmp_path, audit_inputs))


def test_audit_stage_fails_the_pipeline_on_a_failed_audit(
    tmp_path: Path, audit_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engines, "audit", _fake_audit(passed=False))
    with pytest.raises(QualityGateError, match="pii_echo"):
        audit_stage.STAGE.run(_ctx(tmp_path, audit_inputs))


def test_audit_stage_returns_the_report_and_the_audited_corpus(
    tmp_path: Path, audit_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engines, "audit", _fake_audit(passed=True))
    out = audit_stage.STAGE.run(_ctx(tmp_path, audit_inputs))
    report = AuditReport.model_validate_json(out.artifacts["report"].read_text())
    assert sha256_file(out.artifacts["corpus"]) == report.audited_corpus_sha256


def test_site_report_markdown_shows_the_gap() -> None:
    from shared.metrics import corpus_diagnostics

    gold = ModelScores(
        token_precision=0.9, token_recall=0.8, token_f1=0.85, exact_f1=0.8, overlap_f1=0.9,
        leakage_rate=0.1,
    )  # fmt: skip
    syn = gold.model_copy(update={"token_f1": 0.6})
    real = corpus_diagnostics(_corpus(4), language="en")
    plain = Corpus(documents=(Document(id="x", text="no names here at all"),), labels=("PER",))
    report = SiteReport(
        site_id="h1", n_test_documents=5, n_synthetic_documents=1, gold=gold, synthetic=syn,
        token_f1_gap=0.25, real_diagnostics=real,
        synthetic_diagnostics=corpus_diagnostics(plain, language="en"), settings={},
    )  # fmt: skip
    text = render_markdown(report)
    assert "Token F1 gap (gold - synthetic): +0.250" in text
    assert "| PER | 1.000 | 0.000 |" in text
    assert "| documents | 4.000 | 1.000 |" in text
    assert "| PII document share | 1.000 | 0.000 |" in text
