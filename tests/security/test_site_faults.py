"""Issue 30, faults at the site: an export killed half-way, and two runs over one work dir.

A SIGKILL during export leaves the hidden ``.<id>.*.tmp`` folder ``atomic_directory`` was
building; the ClientApp must never send it and the next run removes it. A second pipeline
run over a work dir in use must stop at once and name the process that holds it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.export import MANIFEST
from shared.errors import UsageError
from site_agent.config import build_site_config
from site_agent.federation.bundle import latest_bundle
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.pipeline import run_pipeline

REPO = Path(__file__).resolve().parents[2]


def _note(ctx: StageContext) -> StageOutput:
    out = ctx.stage_dir / "note.txt"
    out.write_text("done", encoding="utf-8")
    return StageOutput(artifacts={"note": out})


QUICK = (Stage("quick", _note, lambda c: {}),)


def site_config(tmp_path: Path) -> dict[str, Any]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "a", "text": "x"}\n', encoding="utf-8")
    return {"site_id": "s", "corpus": {"path": str(gold)}, "work_dir": str(tmp_path / "w")}


def bundle(outbox: Path, name: str, created_at: str) -> Path:
    folder = outbox / name
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text(json.dumps({"created_at": created_at}), encoding="utf-8")
    return folder


PARTIAL = [
    (".site-a-2027.x1y2.tmp", "2027-01-01T00:00:00"),  # SIGKILL while the export built it
    (".site-a-2026.old", "2028-01-01T00:00:00"),  # killed while replacing a bundle
    ("site-a-2029.tmp", "2029-01-01T00:00:00"),
]


@pytest.mark.parametrize(("name", "created_at"), PARTIAL, ids=[p[0] for p in PARTIAL])
def test_a_partial_bundle_is_never_picked(tmp_path: Path, name: str, created_at: str) -> None:
    real = bundle(tmp_path / "outbox", "site-a-2026", "2026-01-01T00:00:00")
    bundle(tmp_path / "outbox", name, created_at)  # newer, but not a bundle
    assert latest_bundle(tmp_path / "outbox") == real


def test_the_next_run_removes_an_interrupted_exports_folders(tmp_path: Path) -> None:
    config = build_site_config(site_config(tmp_path))
    outbox = config.work_dir / "outbox"
    real = bundle(outbox, "site-a-2026", "2026-01-01T00:00:00")
    for name, created_at in PARTIAL[:2]:
        bundle(outbox, name, created_at)
    run_pipeline(config, QUICK)
    assert sorted(p.name for p in outbox.iterdir() if p.is_dir()) == [real.name]


SLOW_RUN = """
import json, sys, time
from site_agent.config import build_site_config
from site_agent.pipeline.stage import Stage, StageOutput
from site_agent.stages.pipeline import run_pipeline

def slow(ctx):
    print("running", flush=True)
    time.sleep(120)
    return StageOutput(artifacts={})

run_pipeline(build_site_config(json.loads(sys.argv[1])), (Stage("slow", slow, lambda c: {}),))
"""


def test_a_second_run_over_a_work_dir_is_refused_naming_the_first(tmp_path: Path) -> None:
    data = site_config(tmp_path)
    first = subprocess.Popen(
        [sys.executable, "-c", SLOW_RUN, json.dumps(data)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "running"
        with pytest.raises(UsageError, match=rf"in use by pid {first.pid} .*fix:"):
            run_pipeline(build_site_config(data), QUICK)
    finally:
        first.kill()
        first.wait()
    run_pipeline(build_site_config(data), QUICK)  # the lock died with its holder
