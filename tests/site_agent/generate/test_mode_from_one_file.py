"""A new generation mode is one new file: registered from ``echo_mode.py`` alone, it is valid
in site.toml and drives a tiny pipeline end to end: the generator recipe takes its epochs
and their reason from the mode, the plan prices it, and the PHI-rate check counts its
marker. Nothing outside that file names it."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from site_agent.config import build_site_config
from site_agent.generate.modes import MODES
from site_agent.generate.settings import PLUGIN_MODES
from site_agent.pipeline.stage import read_record
from site_agent.plan.artifact import read_plan
from site_agent.stages.pipeline import folder_of, run_pipeline
from site_agent.stages.registry import STAGES
from tests.meddocan_slice import slice_site

MODULE = "tests.site_agent.generate.echo_mode"


@pytest.fixture
def echo_registered() -> Iterator[None]:
    with MODES.scoped():
        if MODULE in sys.modules:
            importlib.reload(sys.modules[MODULE])
        else:
            importlib.import_module(MODULE)
        try:
            yield
        finally:
            PLUGIN_MODES.discard("echo")


def test_a_mode_from_one_file_runs_the_pipeline(
    echo_registered: None, meddocan_dir: Path, tmp_path: Path
) -> None:
    data, _ = slice_site(
        tmp_path,
        meddocan_dir,
        "echo-site",
        generation={
            "mode": "echo",
            "min_phi_rate": 0.25,
            "phi_check_after": 2,
            "samples_per_prompt": 1,
            "max_new_tokens": 16,
            "max_documents": 4,
        },
        export={"accept_degenerate": "tiny test models"},
    )
    config = build_site_config(data)
    run_pipeline(config, STAGES[:6])  # through annotate: the annotator labels echo's notes
    plan = read_plan(config.work_dir)
    assert plan is not None and plan.generator.mode == "echo"
    assert plan.generator.epochs == 1
    assert any("one pass, the echo mode's own choice" in r for r in plan.generator.reasons)
    annotate = {s.stage: s for s in plan.stages}["annotate"]
    assert annotate.hours > 0 and "inference" in annotate.basis  # priced: the annotator labels
    adapt = json.loads((folder_of(config.work_dir, "adapt") / "adapt.json").read_text())
    assert adapt["settings"]["epochs"] == 1 and adapt["recipe"]["mode"] == "echo"
    generate = read_record(folder_of(config.work_dir, "generate"))
    assert generate is not None and generate.summary["mode"] == "echo"
    check = generate.summary["phi_rate"]
    assert check["mode"] == "echo" and check["passed"] and check["written"]["mentions"] > 0
    annotated = read_record(folder_of(config.work_dir, "annotate"))
    assert annotated is not None and annotated.summary["spans_from"] == "annotator"


def test_nothing_outside_its_file_names_the_mode() -> None:
    root = Path(__file__).resolve().parents[3]
    naming = [
        path.relative_to(root).as_posix()
        for package in ("protocol", "shared", "ner", "site_agent", "coordinator", "studies")
        for path in (root / package).rglob("*.py")
        if '"echo"' in path.read_text(encoding="utf-8")
    ]
    assert naming == []
