"""run_audit end to end: planted leaks are measured and filtered; reports are written."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from protocol.audit import AuditReport
from shared.corpus_io import read_corpus
from shared.errors import ConfigError
from shared.provenance import sha256_file
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy, FilterSettings, load_policy
from site_agent.privacy.reference import word_spans
from tests.tiny_models import tiny_tokenizer

from .builders import FILLER, random_corpus

REAL = random_corpus(21, 30, "r", words=80)
CLEAN = random_corpus(99, 20, "c", words=80, other=True)


def _leaky(real: Corpus, count: int, seed: int = 0) -> list[Document]:
    """Documents that copy a 10-word run overlapping a gold name span of a real document."""
    rng = random.Random(seed)
    out = []
    for i, doc in enumerate(real.documents[:count]):
        words = word_spans(doc.text)
        name = doc.spans[0]
        first = next(k for k, (_, s, e) in enumerate(words) if s < name.end and name.start < e)
        start = max(0, first - rng.randint(0, 3))
        run = doc.text[words[start][1] : words[start + 9][2]]
        filler = " ".join(rng.choice(FILLER) + "x" for _ in range(40))
        out.append(Document(id=f"leak{i}", text=f"{filler[:120]} {run} {filler[120:]}"))
    return out


def _synthetic(leaks: int) -> Corpus:
    docs = [Document(id=d.id, text=d.text) for d in CLEAN.documents]
    return Corpus(documents=tuple(docs[:10] + _leaky(REAL, leaks) + docs[10:]))


def test_copied_pii_runs_give_sensitive_recall_and_are_filtered(tmp_path: Path) -> None:
    only = AuditPolicy(filters=FilterSettings(enabled=("sensitive_ngram",)))
    report = run_audit(REAL, _synthetic(5), only, tmp_path)
    before = report.measures["ngram_recall"]["before"]["words"]["10"]
    after = report.measures["ngram_recall"]["after"]["words"]["10"]
    assert before["sensitive_recall"] > 0
    assert after["sensitive_recall"] == 0
    assert report.dropped_by_reason == {"sensitive_ngram": 5}
    kept = {d.id for d in read_corpus(tmp_path / AUDITED_CORPUS).documents}
    assert not any(k.startswith("leak") for k in kept) and len(kept) == 20
    rule = {r.name: r for r in report.rules}["identifying_10gram_recall_words"]
    assert rule.passed and rule.measured == 0


def test_clean_corpus_has_zero_sensitive_10gram_recall(tmp_path: Path) -> None:
    report = run_audit(REAL, _synthetic(0), AuditPolicy(), tmp_path)
    assert report.measures["ngram_recall"]["before"]["words"]["10"]["sensitive_recall"] == 0
    assert report.dropped_by_reason.get("sensitive_ngram") == 0
    assert report.passed


def test_default_policy_drops_leaks_and_copies_and_names_reasons(tmp_path: Path) -> None:
    copies = [Document(id="copy0", text=REAL.documents[7].text.upper())]
    synthetic = Corpus(documents=_synthetic(3).documents + tuple(copies))
    report = run_audit(REAL, synthetic, AuditPolicy(), tmp_path)
    assert report.n_kept_documents == 20
    assert report.dropped_by_reason["exact_duplicate_real"] == 1
    assert report.dropped_by_reason["pii_echo"] == 3  # the copied runs hold a full name
    assert report.flagged_by_reason["sensitive_ngram"] == 4  # the 3 runs and the copy
    top = report.measures["nearest_real"]["before"]["highest_risk_pairs"][0]
    assert (top["synthetic_id"], top["real_id"], top["rouge_5"]) == ("copy0", "r7", 1.0)
    assert report.passed


def test_reports_are_written_and_carry_no_real_text(tmp_path: Path) -> None:
    report = run_audit(REAL, _synthetic(3), AuditPolicy(), tmp_path)
    saved = AuditReport.model_validate_json((tmp_path / "audit.json").read_text())
    assert saved == report
    assert saved.audited_corpus_sha256 == sha256_file(tmp_path / AUDITED_CORPUS)
    markdown = (tmp_path / "audit.md").read_text()
    for heading in (
        "**Verdict: PASSED**",
        "## Rules",
        "## Documents",
        "## n-gram recall",
        "## PII echo",
    ):
        assert heading in markdown
    exported = (tmp_path / "audit.json").read_text() + markdown
    for doc in REAL.documents:
        for span in doc.spans:
            assert doc.surface(span) not in exported


def test_failing_rule_is_named(tmp_path: Path) -> None:
    policy = AuditPolicy(filters=FilterSettings(enabled=()))
    report = run_audit(REAL, _synthetic(2), policy, tmp_path)
    assert not report.passed
    assert "identifying_10gram_recall_words" in report.failed_rules
    assert "FAILED: " in (tmp_path / "audit.md").read_text()


def test_policy_file_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("[filters]\nrouge_threshold = 2.0\n[pii_echo]\nmin_char = 3\n")
    with pytest.raises(ConfigError) as error:
        load_policy(path)
    text = str(error.value)
    assert "filters -> rouge_threshold" in text and "pii_echo -> min_char" in text
    path.write_text(json.dumps({"name": "strict", "filters": {"rouge_threshold": 0.1}}))
    path = path.rename(tmp_path / "policy.json")
    assert load_policy(path).filters.rouge_threshold == 0.1


def test_unknown_filter_or_measure_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown filter.*'rogue'"):
        run_audit(
            REAL, _synthetic(0), AuditPolicy(filters=FilterSettings(enabled=("rogue",))), tmp_path
        )
    with pytest.raises(ConfigError, match=r"unknown measure.*'nope'"):
        run_audit(REAL, _synthetic(0), AuditPolicy(measures=("nope",)), tmp_path)


def test_threads_do_not_change_the_results(tmp_path: Path) -> None:
    synthetic = _synthetic(4)
    one = run_audit(REAL, synthetic, AuditPolicy(), tmp_path / "one", workers=1)
    two = run_audit(REAL, synthetic, AuditPolicy(), tmp_path / "two", workers=2)
    assert one.measures == two.measures
    assert one.dropped_by_reason == two.dropped_by_reason
    assert one.audited_corpus_sha256 == two.audited_corpus_sha256


HEADER = "Datos asistenciales del paciente ingresado en la planta de medicina interna, nacido el"
DATED = Document(
    id="real-dated",
    text=f"{HEADER} 10 03 1940 en Soria.",
    spans=(Span(start=len(HEADER) + 1, end=len(HEADER) + 11, label="FECHAS"),),
)


@pytest.mark.parametrize(
    ("synthetic_date", "share", "identifiers", "dropped"),
    [
        ("10 11 2001", 0.5, "all", False),  # the header and "10": 2 of the date's 8 characters
        ("10 11 2001", 0.0, "all", True),  # any overlap, the sensitive recall's own definition
        ("10 03 2001", 0.5, "all", True),  # "10 03": half the date
        ("10 03 2001", 0.75, "all", False),
        ("10 03 2001", 0.5, "specific", False),  # the default: a date alone is not specific
        ("10 03 1940", 0.5, "specific", False),  # not even the whole date (PII echo counts it)
    ],
)
def test_the_filter_drops_notes_by_the_share_of_an_identifier_they_repeat(
    tmp_path: Path, synthetic_date: str, share: float, identifiers: str, dropped: bool
) -> None:
    real = Corpus(documents=(DATED,))
    note = Document(id="s0", text=f"{HEADER} {synthetic_date} en Teruel.")
    filters = FilterSettings(
        enabled=("sensitive_ngram",),
        sensitive_ngram_min_share=share,
        sensitive_ngram_identifiers=identifiers,  # type: ignore[arg-type]
    )
    policy = AuditPolicy(filters=filters)
    report = run_audit(real, Corpus(documents=(note,)), policy, tmp_path)
    before = report.measures["ngram_recall"]["before"]["words"]["10"]
    assert before["sensitive_recall"] > 0  # the paper's measure counts the header either way
    assert report.dropped_by_reason == {"sensitive_ngram": int(dropped)}
    assert (before["identifying_recall"] > 0) == dropped
    after = report.measures["ngram_recall"]["after"]["words"]["10"]
    assert after["identifying_recall"] == 0


TOKEN_REAL = random_corpus(31, 10, "r", words=40)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generator's tokenizer: a tiny one trained on the real notes, saved to a folder."""
    path = tmp_path_factory.mktemp("tok")
    tiny_tokenizer([d.text for d in TOKEN_REAL.documents], "causal").save_pretrained(path)
    return path


def test_audit_reports_token_ngram_recall(tokenizer_dir: Path, tmp_path: Path) -> None:
    leak = Document(id="leak", text=TOKEN_REAL.documents[3].text)
    synthetic = Corpus(documents=(*random_corpus(32, 4, "s", 40, other=True).documents, leak))
    report = run_audit(TOKEN_REAL, synthetic, AuditPolicy(), tmp_path, tokenizer=tokenizer_dir)
    tokens = report.measures["ngram_recall"]["before"]["tokens"]
    assert set(tokens) == {"3", "5", "10"}
    assert tokens["10"]["sensitive_recall"] > 0
    assert tokens["10"]["identifying_recall"] > 0
    assert report.measures["ngram_recall"]["after"]["tokens"]["10"]["identifying_recall"] == 0
    assert "identifying_10gram_recall_tokens" in {r.name for r in report.rules}
    assert report.passed
