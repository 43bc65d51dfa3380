"""The experiment file: what a valid one expands to, and errors that name file, field and fix."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from studies.experiment import plan_runs
from studies.spec import ExperimentSpecError, load_experiment, nest, parse_spec
from studies.specs import spec_path

QUICK = spec_path("quick.toml")
REPO = Path(__file__).resolve().parents[2]
MEDDOCAN = spec_path("meddocan.toml")
MEDDOCAN_PRIVACY = MEDDOCAN.with_name("meddocan-privacy.toml")


def spec_data(**study: object) -> dict[str, object]:
    return {
        "experiment": {"name": "t", "site": "site.toml", "repeats": 2},
        "study": [{"name": "s", **study}],
    }


def test_a_grid_expands_to_every_combination_times_repeats() -> None:
    spec = parse_spec(
        spec_data(
            set={"regime": "augmentation"},
            vary={"synthetic_fraction": [0.0, 0.5, 0.9], "generation.mode": ["a", "b"]},
        ),
        "x.toml",
    )
    runs = plan_runs(spec)
    assert len(runs) == 3 * 2 * 2
    assert {r.condition.overrides["generation.mode"] for r in runs} == {"a", "b"}
    assert {r.condition.synthetic_fraction for r in runs} == {0.0, 0.5, 0.9}
    assert len({r.run_id for r in runs}) == len(runs)


def test_data_fraction_sets_both_shares_and_dotted_knobs_are_overrides() -> None:
    spec = parse_spec(spec_data(vary={"data_fraction": [0.25]}, set={"adapt.max_steps": 3}), "x")
    (condition,) = spec.study[0].expand({})
    assert condition.adapt_fraction == condition.annotator_fraction == 0.25
    assert condition.overrides == {"adapt.max_steps": 3}
    assert nest({"a.b.c": 1, "a.d": 2}) == {"a": {"b": {"c": 1}, "d": 2}}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"experiment": {"name": "t", "site": "s.toml", "repets": 2}, "study": [{"name": "s"}]},
            ["bad.toml: [experiment -> repets]", "unknown field; fix"],
        ),
        (
            {"experiment": {"name": "t"}, "study": [{"name": "s"}]},
            ["[experiment -> site]", "required field is missing; fix: add it"],
        ),
        (
            spec_data(set={"regime": "fixed-n"}),
            ["[study -> 0 (s)]", "regime 'fixed-n' needs real_fraction", "fix: set it"],
        ),
        (
            spec_data(set={"regime": "compute-matched", "synthetic_fraction": 0.5}),
            ["needs steps"],
        ),
        (spec_data(vary={"synthetic_fraction": []}), ["are empty; fix"]),
        (spec_data(set={"synthetic_fraction": 1.0}), ["synthetic_fraction", "less than 1"]),
        (spec_data(set={"regime": "mixed"}), ["regime", "synthetic-only"]),
        (
            {"experiment": {"name": "t", "site": "s"}, "study": [{"name": "a"}, {"name": "a"}]},
            ["['a'] appear twice; fix"],
        ),
    ],
)
def test_bad_specs_name_file_field_and_fix(data: dict[str, object], expected: list[str]) -> None:
    with pytest.raises(ExperimentSpecError) as caught:
        parse_spec(data, "bad.toml")
    for part in expected:
        assert part in str(caught.value)


def test_missing_file_bad_toml_and_missing_site(tmp_path: Path) -> None:
    with pytest.raises(ExperimentSpecError, match="no such experiment file; fix"):
        load_experiment(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[experiment\nname = 1\n", encoding="utf-8")
    with pytest.raises(ExperimentSpecError, match="not valid TOML"):
        load_experiment(broken)
    lonely = tmp_path / "lonely.toml"
    lonely.write_text(
        '[experiment]\nname = "x"\nsite = "absent.toml"\n[[study]]\nname = "s"\n',
        encoding="utf-8",
    )
    with pytest.raises(ExperimentSpecError, match=r"\[experiment -> site\] .*absent.toml"):
        load_experiment(lonely)


@pytest.mark.parametrize(
    "path", [QUICK, MEDDOCAN, MEDDOCAN_PRIVACY], ids=["quick", "meddocan", "meddocan-privacy"]
)
def test_shipped_files_validate(path: Path) -> None:
    spec, site = load_experiment(path)
    assert site.is_file()
    assert plan_runs(spec)
    quick, _ = load_experiment(path, quick=True)
    assert quick.experiment.tiny_models


def test_console_script_exits_78_on_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        f'[experiment]\nname = "x"\nsite = "{QUICK.parent / "quick-site.toml"}"\nrepets = 2\n'
        '[[study]]\nname = "s"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        ["deid-studies", "experiment", str(bad), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 78, done.stderr
    assert "[experiment -> repets]" in done.stderr and "fix" in done.stderr
    assert not (tmp_path / "out").exists()


SHIPPED = sorted(p for p in QUICK.parent.glob("*.toml") if not p.stem.endswith("-site"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_experiment_file_plans_its_runs(path: Path) -> None:
    for quick in (False, True):
        spec, site = load_experiment(path, quick=quick)
        runs = plan_runs(spec)
        assert site.is_file() and runs
        assert {r.study for r in runs} == {s.name for s in spec.study}
        assert len(runs) % spec.experiment.repeats == 0


def test_the_shipped_files_are_package_data_listed_by_the_console_script(tmp_path: Path) -> None:
    """Found through the installed package, not by walking up from a source file."""
    done = subprocess.run(
        ["deid-studies", "specs"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = dict(line.split("\t") for line in done.stdout.splitlines())
    assert {"quick.toml", "quick-site.toml", "meddocan.toml"} <= set(listed)
    assert Path(listed["quick.toml"]) == QUICK and QUICK.is_file()
