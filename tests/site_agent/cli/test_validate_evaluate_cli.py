"""``site-agent validate`` and ``site-agent evaluate`` end to end through typer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocol.evaluation import CorpusDiagnostics, EvaluationReport
from shared.corpus_io import label_problems, read_corpus, require_documents, write_corpus
from shared.errors import CorpusFormatError
from shared.provenance import sha256_file
from site_agent.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def small_meddocan(meddocan_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 12 MEDDOCAN test documents as a JSONL file."""
    full = read_corpus(meddocan_dir / "test.jsonl")
    path = tmp_path_factory.mktemp("meddocan") / "small.jsonl"
    write_corpus(full.model_copy(update={"documents": full.documents[:12]}), path)
    return path


def test_validate_meddocan_prints_diagnostics_and_writes_json(
    meddocan_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "diag.json"
    result = runner.invoke(app, ["validate", str(meddocan_dir / "train.jsonl"), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output
    assert "NOMBRE_SUJETO_ASISTENCIA" in result.output
    diagnostics = CorpusDiagnostics.model_validate_json(out.read_text(encoding="utf-8"))
    assert (diagnostics.n_documents, diagnostics.n_spans) == (500, 11333)
    assert diagnostics.language == "spanish"
    assert diagnostics.provenance is not None
    assert diagnostics.provenance.source_sha256 == sha256_file(meddocan_dir / "train.jsonl")


def test_validate_lists_every_problem_of_an_invalid_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    rows = [
        json.dumps({"id": "a", "text": "Juan", "spans": [{"start": 0, "end": 9, "label": "PER"}]}),
        "{not json",
        json.dumps({"id": "b", "text": "Ana", "spans": []}),
    ]
    bad.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == CorpusFormatError.exit_code
    assert "invalid corpus" in result.output
    assert f"{bad}:1:" in result.output and "lies outside the text" in result.output
    assert f"{bad}:2: not valid JSON" in result.output


def test_evaluate_gold_against_itself(small_meddocan: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    args = ["evaluate", "--gold", str(small_meddocan), "--pred", str(small_meddocan)]
    result = runner.invoke(app, [*args, "--out", str(out), "--bootstrap", "50", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "Document-level leakage" in result.output
    report = EvaluationReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert report.n_documents == 12
    assert report.token.micro.f1 == report.exact.micro.f1 == report.overlap.micro.f1 == 1.0
    assert report.leakage.leakage_rate == 0.0
    assert report.confidence_intervals["exact.micro.f1"].n_resamples == 50
    assert len(report.provenance.parents) == 2


def test_evaluate_with_a_mapping_file(small_meddocan: Path, tmp_path: Path) -> None:
    labels = read_corpus(small_meddocan).labels
    mapping = tmp_path / "coarse.json"
    coarse = {label: ("PER" if label.startswith("NOMBRE") else "OTHER") for label in labels}
    mapping.write_text(
        json.dumps({"name": "toy", "coarse_labels": ["PER", "OTHER"], "mapping": coarse}),
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    args = ["evaluate", "--gold", str(small_meddocan), "--pred", str(small_meddocan)]
    result = runner.invoke(
        app, [*args, "--mapping", str(mapping), "--out", str(out), "--bootstrap", "0"]
    )
    assert result.exit_code == 0, result.output
    report = EvaluationReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert set(report.overlap.per_label) == {"PER", "OTHER"}
    assert report.label_mapping == "toy"
    assert report.confidence_intervals == {}


def test_evaluate_refuses_predictions_for_unknown_documents(
    small_meddocan: Path, tmp_path: Path
) -> None:
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"id": "nobody", "text": "x", "spans": []}) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["evaluate", "--gold", str(small_meddocan), "--pred", str(pred)])
    assert isinstance(result.exception, CorpusFormatError)
    assert "'nobody' is not in the gold corpus" in str(result.exception)


def test_validate_imports_no_ml_framework(tmp_path: Path) -> None:
    """``validate`` must stay fast: torch, transformers and datasets are never imported."""
    corpus = tmp_path / "tiny.jsonl"
    corpus.write_text(
        json.dumps({"id": "a", "text": "Juan vive en Madrid.", "spans": []}) + "\n",
        encoding="utf-8",
    )
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from site_agent.cli import app\n"
        f"result = CliRunner().invoke(app, ['validate', {str(corpus)!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(sorted(m for m in ('torch', 'transformers', 'datasets') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_validate_refuses_only_the_labels_no_stage_can_use(tmp_path: Path) -> None:
    """Issue 46: any label name works as written except ``O`` (the IOB2 outside tag; a blank
    label the JSONL reader refuses already); the console script names it, where it is, and
    the fix, before any pre-flight."""

    def note(doc_id: str, label: str) -> str:
        return json.dumps({"id": doc_id, "text": "Ana vino", "spans": [
            {"start": 0, "end": 3, "label": label}]}, ensure_ascii=False)  # fmt: skip

    good = tmp_path / "good.jsonl"
    labels = ["Date", "doctor-name", "ID.num", "Název", "Phone #", "B-ref"]
    good.write_text("\n".join(note(f"d{i}", x) for i, x in enumerate(labels)) + "\n")
    assert label_problems(require_documents(read_corpus(good), good)) == []
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([note("a", "Date"), note("b", "O"), note("c", "O")]) + "\n")
    refused = subprocess.run(
        ["site-agent", "validate", str(bad)], capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == CorpusFormatError.exit_code
    assert f"{bad}: 1 label(s) cannot be used" in refused.stderr
    assert "document 'b', span [0, 3): label 'O' is the annotator's outside tag" in refused.stderr
    assert "fix: rename the label" in refused.stderr
