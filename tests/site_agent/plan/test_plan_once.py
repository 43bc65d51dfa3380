"""The run plan is computed once per run and applied as it was printed.

``site-agent validate`` prints the generator recipe; the pipeline writes the same plan as
``run-plan.json`` before any stage runs; the adapt stage trains with that recipe. Before the
plan was an artifact, the adapt stage re-planned from the pseudonymised notes: under
``[pseudonymise] mode = "filter"`` those have lost their PHI sentences, so the stage ran
another PHI-window repeat and another step count than the one printed.

The slice keeps its PHI spans on 8 of its 30 notes (a sparse-PHI site: PHI-bearing windows
are repeated), and ``[adapt] epochs = 1`` keeps the estimated steps a function of the
corpus's length (no ``max_steps`` floor), so both numbers can tell two corpora apart.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from site_agent.config import build_site_config
from site_agent.generate.modes import MODES
from site_agent.pipeline.stage import read_record
from site_agent.plan import estimate
from site_agent.plan.artifact import PLAN_FILE, read_plan
from site_agent.stages.pipeline import folder_of, run_pipeline
from site_agent.stages.registry import STAGES
from tests.meddocan_slice import slice_site

WITH_PHI = 8


def _sparse_site(root: Path, meddocan_dir: Path, pseudonymise: dict[str, Any]) -> dict[str, Any]:
    data, _ = slice_site(
        root,
        meddocan_dir,
        "plan-once",
        pseudonymise=pseudonymise,
        adapt={"epochs": 1},
        generation={
            "min_phi_rate": 0.0,  # a tiny random generator writes no placeholders to check
            "samples_per_prompt": 1,
            "max_new_tokens": 16,
            "max_documents": 4,
        },
        export={"accept_degenerate": "tiny test models"},
    )
    corpus = Path(data["corpus"]["path"])
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    for row in rows[WITH_PHI:]:
        row["spans"] = []  # most notes hold no PHI (their identifiers stay unlabelled here)
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


def _printed(data: dict[str, Any], root: Path) -> tuple[int, int]:
    """(optimiser steps, PHI-window repeat) as ``site-agent validate`` prints them."""
    toml = root / "site.toml"
    toml.write_text(tomli_w.dumps(data), encoding="utf-8")
    done = subprocess.run(
        ["site-agent", "validate", data["corpus"]["path"], "--site-config", str(toml)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = re.search(r"(\d+) optimiser steps .* PHI windows x(\d+)", " ".join(done.stdout.split()))
    assert found is not None, done.stdout
    return int(found[1]), int(found[2])


def _applied(work_dir: Path) -> dict[str, Any]:
    adapt = json.loads((folder_of(work_dir, "adapt") / "adapt.json").read_text(encoding="utf-8"))
    return adapt


@pytest.mark.parametrize("mode", ["filter", "surrogate"])
def test_adapt_applies_the_plan_validate_printed(
    mode: str,
    meddocan_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _sparse_site(tmp_path, meddocan_dir, {"mode": mode})
    steps, repeat = _printed(data, tmp_path)
    plans = []
    recipe_of = estimate.resolve_generator_recipe

    def counted(*args: Any, **kwargs: Any) -> Any:
        plans.append(args)
        return recipe_of(*args, **kwargs)

    monkeypatch.setattr(estimate, "resolve_generator_recipe", counted)
    lookups: list[str] = []
    lookup = MODES.get

    def looked_up(name: str, *args: Any, **kwargs: Any) -> Any:
        lookups.append(name)
        return lookup(name, *args, **kwargs)

    monkeypatch.setattr(MODES, "get", looked_up)
    config = build_site_config(data)
    stages = STAGES if mode == "surrogate" else STAGES[:5]  # filter: through generate
    run_pipeline(config, stages)
    assert len(plans) == 1  # the whole run planned once
    assert lookups == [config.generation.mode]  # the mode resolved once for plan and stages
    plan = read_plan(config.work_dir)
    assert plan is not None and (config.work_dir / PLAN_FILE).is_file()
    assert (plan.generator.steps, plan.generator.phi_window_repeat) == (steps, repeat)
    assert repeat > 1  # sparse PHI: the repeat the filtered corpus would not have chosen
    adapt = _applied(config.work_dir)
    assert adapt["recipe"] == plan.generator.model_dump(mode="json")
    assert (adapt["recipe"]["steps"], adapt["settings"]["phi_window_repeat"]) == (steps, repeat)
    record = read_record(folder_of(config.work_dir, "adapt"))
    assert record is not None and record.summary["steps"]["estimated"] == steps
    generate = read_record(folder_of(config.work_dir, "generate"))
    assert generate is not None
    assert generate.summary["phi_prompt_share"] == plan.generator.phi_prompt_share
    if mode == "surrogate":  # every stage ran, planned once
        assert all(read_record(folder_of(config.work_dir, s.name)) is not None for s in STAGES)


def test_a_stage_without_the_run_plan_refuses_rather_than_replanning(tmp_path: Path) -> None:
    from shared.errors import UsageError
    from site_agent.plan.artifact import plan_of_run

    with pytest.raises(UsageError, match=r"run-plan\.json: no readable run plan; fix:"):
        plan_of_run(tmp_path)
