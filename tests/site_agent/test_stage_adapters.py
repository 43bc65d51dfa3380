"""The composition root stays thin: each module of ``site_agent/stages/`` wires a stage (what
it reads from site.toml, which artifacts it takes) in at most 150 lines, and what an adapter
computed beyond that lives in its stage's library; no two product modules share a name
as vague as ``run.py``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("protocol", "shared", "ner", "site_agent", "coordinator", "studies")


def test_every_stage_adapter_is_at_most_150_lines() -> None:
    lines = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in (REPO / "site_agent" / "stages").glob("*.py")
    }
    assert {name: n for name, n in lines.items() if n > 150} == {}


def test_no_two_product_modules_are_named_run_py() -> None:
    names = Counter(path.name for package in PRODUCT for path in (REPO / package).rglob("*.py"))
    assert names["run.py"] <= 1


def test_architecture_md_holds_the_picture_the_code_draws() -> None:
    from site_agent.stages.picture import picture

    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert f"```\n{picture()}\n```" in text, "run: python -m site_agent.stages.picture"
