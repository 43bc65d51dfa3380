"""The export gate refuses a missing, failing, stale or tampered audit, naming the rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import Corpus, Document
from shared.corpus_io import write_corpus
from shared.errors import ExportRefusedError
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy, FilterSettings
from site_agent.export.gate import require_passing_audit
from tests.site_agent.audit.builders import random_corpus

REAL = random_corpus(5, 12, "r", words=40)
REPO = Path(__file__).resolve().parents[3]


def _synthetic(leak: bool) -> Corpus:
    clean = random_corpus(6, 6, "s", words=40, other=True)
    docs = clean.documents + ((Document(id="leak", text=REAL.documents[0].text),) if leak else ())
    return Corpus(documents=docs)


@pytest.fixture()
def passing(tmp_path: Path) -> Path:
    run_audit(REAL, _synthetic(leak=True), AuditPolicy(), tmp_path)
    return tmp_path


def test_passing_audit_clears_its_own_corpus(passing: Path) -> None:
    report = require_passing_audit(passing / AUDITED_CORPUS, passing / "audit.json")
    assert report.passed and report.n_kept_documents == 6


def test_missing_report(tmp_path: Path) -> None:
    write_corpus(_synthetic(leak=False), tmp_path / "s.jsonl")
    with pytest.raises(ExportRefusedError, match="'audit_report_present'"):
        require_passing_audit(tmp_path / "s.jsonl", tmp_path / "audit.json")


def test_failing_report_names_the_failing_rules(tmp_path: Path) -> None:
    run_audit(
        REAL, _synthetic(leak=True), AuditPolicy(filters=FilterSettings(enabled=())), tmp_path
    )
    with pytest.raises(ExportRefusedError) as error:
        require_passing_audit(tmp_path / AUDITED_CORPUS, tmp_path / "audit.json")
    assert "exact_duplicates_of_real" in str(error.value)
    assert "identifying_10gram_recall_words" in str(error.value)
    assert error.value.exit_code == 4


def test_stale_report_after_the_corpus_changed(passing: Path) -> None:
    target = passing / AUDITED_CORPUS
    target.write_text(target.read_text() + json.dumps({"id": "new", "text": "x"}) + "\n")
    with pytest.raises(ExportRefusedError, match=r"'audited_corpus_hash'.*stale"):
        require_passing_audit(target, passing / "audit.json")


def test_other_corpus_is_refused(passing: Path) -> None:
    write_corpus(_synthetic(leak=True), passing / "raw.jsonl")
    with pytest.raises(ExportRefusedError, match="audited_corpus_hash"):
        require_passing_audit(passing / "raw.jsonl", passing / "audit.json")


@pytest.mark.parametrize("edit", ["flip_verdict", "garbage", "no_rules"])
def test_tampered_report_is_refused(passing: Path, edit: str) -> None:
    path = passing / "audit.json"
    if edit == "garbage":
        path.write_text("{not json")
    elif edit == "no_rules":
        data = json.loads(path.read_text())
        data["rules"] = []
        path.write_text(json.dumps(data))
    else:
        data = json.loads(path.read_text())
        data["rules"][0]["passed"] = False
        path.write_text(json.dumps(data))
    with pytest.raises(ExportRefusedError, match="'audit_report_valid'"):
        require_passing_audit(passing / AUDITED_CORPUS, path)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "site_agent", "audit", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_audits_plants_and_fails_with_exit_code(tmp_path: Path) -> None:
    write_corpus(REAL, tmp_path / "train.jsonl")
    write_corpus(_synthetic(leak=True), tmp_path / "synth.jsonl")
    ok = _cli(
        "--real",
        str(tmp_path / "train.jsonl"),
        "--synthetic",
        str(tmp_path / "synth.jsonl"),
        "--out",
        str(tmp_path / "a"),
    )
    assert ok.returncode == 0, ok.stderr
    assert require_passing_audit(
        tmp_path / "a" / AUDITED_CORPUS, tmp_path / "a" / "audit.json"
    ).passed
    (tmp_path / "off.toml").write_text("[filters]\nenabled = []\n")
    bad = _cli(
        "--real",
        str(tmp_path / "train.jsonl"),
        "--synthetic",
        str(tmp_path / "synth.jsonl"),
        "--policy",
        str(tmp_path / "off.toml"),
        "--out",
        str(tmp_path / "b"),
    )
    assert bad.returncode == 3 and "exact_duplicates_of_real" in bad.stderr
    planted = _cli(
        "--real",
        str(tmp_path / "train.jsonl"),
        "--plant-canaries",
        "3",
        "--out",
        str(tmp_path / "c"),
    )
    assert planted.returncode == 0, planted.stderr
    assert len(json.loads((tmp_path / "c" / "canaries.json").read_text())["canaries"]) == 3
    assert (tmp_path / "c" / "train.canaries.jsonl").is_file()
