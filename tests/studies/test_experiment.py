"""The experiment runner end to end on tiny models (the quick site: the demo corpus).

Reuse: runs that share stages compute them once (one store folder, records untouched).
Resume: a finished run's ``result.json`` is kept and not run again; the rest continue.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from site_agent.pipeline.stage import read_record
from studies.experiment import RESULT_FILE, plan_runs, run_experiment
from studies.spec import load_experiment, parse_spec
from studies.specs import spec_path

REPO = Path(__file__).resolve().parents[2]
SITE = spec_path("quick-site.toml")
QUICK = spec_path("quick.toml")
SHARED = ("split", "pseudonymise", "subsets", "annotator", "adapt", "generate", "annotate")


def small_spec(repeats: int = 2) -> dict[str, object]:
    return {
        "experiment": {
            "name": "small",
            "site": str(SITE),
            "repeats": repeats,
            "bootstrap_resamples": 20,
            "tiny_models": True,
            "defaults": {"synthetic_amount": 1.0},
        },
        "study": [
            {"name": "regimes", "vary": {"regime": ["synthetic-only", "real-only"]}},
            {
                "name": "mix",
                "set": {"regime": "augmentation"},
                "vary": {"synthetic_fraction": [0.5]},
            },
        ],
    }


def results_of(out: Path) -> dict[str, dict[str, object]]:
    return {
        str(p.parent.relative_to(out / "runs")): json.loads(p.read_text())
        for p in sorted((out / "runs").rglob(RESULT_FILE))
    }


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The small experiment stopped after its first run, then run to the end."""
    out = tmp_path_factory.mktemp("experiment")
    spec = parse_spec(small_spec(), "small")
    first = run_experiment(spec, SITE, out, max_runs=1)
    assert [r.run_id for r in first] == ["regimes/00-r0"]
    before = results_of(out)
    records = {p: read_record(p.parent) for p in (out / "store").glob("*/*/stage.json")}
    run_experiment(spec, SITE, out)
    return out, {"before": before, "records": records}


def test_every_planned_run_completes_with_utility_and_privacy(
    interrupted: tuple[Path, dict[str, object]],
) -> None:
    out, _ = interrupted
    results = results_of(out)
    assert set(results) == {r.run_id for r in plan_runs(parse_spec(small_spec(), "small"))}
    for result in results.values():
        assert result["status"] == "completed", result["error"]
        metrics = result["metrics"]
        assert isinstance(metrics, dict)
        for name in ("token_f1", "exact_f1", "overlap_f1", "leakage_rate", "gold_token_f1"):
            assert 0.0 <= metrics[name] <= 1.0
        assert {"sensitive_5gram_recall", "nearest_rouge_max", "audit_passed"} <= set(
            result["privacy"]  # type: ignore[arg-type]
        )
    sizes = {k: v["training_set"] for k, v in results.items()}
    assert sizes["regimes/00-r0"]["n_real"] == 0  # type: ignore[index]
    assert sizes["regimes/01-r0"]["n_synthetic"] == 0  # type: ignore[index]
    mixed = sizes["mix/00-r0"]
    assert mixed["n_real"] == mixed["n_synthetic"] > 0  # type: ignore[index]


def test_shared_stages_are_computed_once(interrupted: tuple[Path, dict[str, object]]) -> None:
    out, _ = interrupted
    results = results_of(out)
    # repeats vary only the final training: everything upstream is one folder per stage
    for stage in SHARED:
        assert len(list((out / "store" / stage).iterdir())) == 1, stage
    assert len(list((out / "store" / "train-evaluate").iterdir())) == len(results)
    for run_id, result in results.items():
        statuses = {s["name"]: s["status"] for s in result["stages"]}  # type: ignore[union-attr]
        if run_id != "regimes/00-r0":
            assert all(statuses[name] == "reused" for name in SHARED), (run_id, statuses)
        assert statuses["train-evaluate"] == "ran"
        work = out / "runs" / run_id / "work"
        assert (work / "04-annotator").resolve() == next((out / "store" / "annotator").iterdir())


def test_resume_keeps_the_finished_run_and_its_stages(
    interrupted: tuple[Path, dict[str, object]],
) -> None:
    out, state = interrupted
    before, records = state["before"], state["records"]
    assert isinstance(before, dict) and isinstance(records, dict)
    assert results_of(out)["regimes/00-r0"] == before["regimes/00-r0"]
    for path, record in records.items():  # not one stage of the first run ran again
        assert read_record(path.parent) == record, path


def test_reports_summarise_each_condition_over_its_repeats(
    interrupted: tuple[Path, dict[str, object]],
) -> None:
    out, _ = interrupted
    report = json.loads((out / "experiment.json").read_text())
    summaries = {(s["study"], s["condition_label"]): s for s in report["summaries"]}
    assert len(summaries) == 3
    for summary in summaries.values():
        token = summary["metrics"]["token_f1"]
        assert summary["n_runs"] == token["n"] == 2
        assert token["mean"] == pytest.approx(sum(token["values"]) / 2)
        assert token["low"] <= token["mean"] <= token["high"]
    markdown = (out / "experiment.md").read_text()
    assert "## regimes" in markdown and "## mix" in markdown and "± " in markdown
    for study in ("regimes", "mix"):
        assert (out / "plots" / f"{study}.png").read_bytes()[:4] == b"\x89PNG"


def test_a_changed_setting_reruns_only_what_depends_on_it(
    interrupted: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    out, _ = interrupted
    data = small_spec(repeats=1)
    data["study"] = [{"name": "regimes", "vary": {"regime": ["real-only"]}}]
    data["experiment"]["overrides"] = {"annotator.training.learning_rate": 1e-3}  # type: ignore[index]
    (result,) = run_experiment(parse_spec(data, "changed"), SITE, out)
    statuses = {s["name"]: s["status"] for s in result.stages}
    assert statuses["split"] == statuses["pseudonymise"] == statuses["adapt"] == "reused"
    assert statuses["annotator"] == statuses["train-evaluate"] == "ran"


def test_console_script_runs_the_quick_spec(tmp_path: Path) -> None:
    spec, _ = load_experiment(QUICK, quick=True)
    done = subprocess.run(
        ["deid-studies", "experiment", "--quick", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "experiment.json").read_text())
    assert len(report["runs"]) == len(plan_runs(spec))
    assert {r["status"] for r in report["runs"]} == {"completed"}


def test_a_failed_run_is_recorded_and_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from studies import stages

    data = small_spec(repeats=1)
    data["study"] = [{"name": "regimes", "vary": {"regime": ["real-only", "synthetic-only"]}}]
    spec = parse_spec(data, "failing")
    real_builder = stages.training_set

    def broken_for_real_only(pools, condition):  # type: ignore[no-untyped-def]
        if condition.regime == "real-only":
            raise RuntimeError("disk full")
        return real_builder(pools, condition)

    monkeypatch.setattr(stages, "training_set", broken_for_real_only)
    first = run_experiment(spec, SITE, tmp_path)
    assert [r.status for r in first] == ["failed", "completed"]
    assert first[0].error == "RuntimeError: disk full"
    assert "## Failed runs" in (tmp_path / "experiment.md").read_text()
    monkeypatch.setattr(stages, "training_set", real_builder)
    second = run_experiment(spec, SITE, tmp_path)
    assert [r.status for r in second] == ["completed", "completed"]
    assert second[1] == first[1]  # the finished run was not run again


def test_k_fold_runs_test_on_disjoint_folds(tmp_path: Path) -> None:
    from protocol import Corpus
    from shared.corpus_io import read_corpus

    data = small_spec(repeats=2)
    data["experiment"]["repeat_by"] = "fold"  # type: ignore[index]
    data["study"] = [{"name": "cv", "vary": {"regime": ["real-only"]}}]
    results = run_experiment(parse_spec(data, "folds"), SITE, tmp_path)
    assert [r.status for r in results] == ["completed", "completed"]
    tests: list[Corpus] = []
    for result in results:
        work = tmp_path / "runs" / result.run_id / "work"
        tests.append(read_corpus(work / "02-folds" / "test.jsonl"))
        statuses = {s["name"]: s["status"] for s in result.stages}
        assert list(statuses)[:2] == ["split", "folds"]
    first, second = ({d.id for d in t.documents} for t in tests)
    assert first and second and not first & second
    n_test = [r.metrics for r in results]
    assert all(0.0 <= m["token_f1"] <= 1.0 for m in n_test)


def test_a_relative_out_folder_is_the_callers_not_the_site_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out runs/x`` puts run folders under the working directory; the site file's own
    relative paths still resolve beside it."""
    import tomllib

    from studies.experiment import run_config

    monkeypatch.chdir(tmp_path)
    spec = parse_spec(small_spec(repeats=1), str(SITE))
    run = plan_runs(spec)[0]
    site = tomllib.loads(SITE.read_text(encoding="utf-8"))
    config = run_config(site, SITE, spec, run, Path("runs/x") / "work")
    assert config.work_dir == tmp_path / "runs" / "x" / "work"
    assert not config.work_dir.is_relative_to(SITE.parent)
