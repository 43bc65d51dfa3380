"""The calibration table: every measurement the run plan prices with, as data.

``measurements.toml`` beside this module holds one row per measurement (value, unit, model,
kind of CPU, the command that measured it, its date, where its results are discussed); the
unit costs (``site_agent/adapt/cost.py``) and the estimate (``site_agent/plan/estimate.py``)
read it through :func:`measured`, and reason strings compute their figures from it. No
measured number, and no date of a measurement, lives in code.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from protocol.base import ProtocolModel

TABLE = Path(__file__).with_name("measurements.toml")

CpuKind = Literal["bf16", "fp32"]


class Measurement(ProtocolModel):
    """One measured figure and how it was measured."""

    key: str
    model: str
    cpu: CpuKind
    value: float
    unit: str
    what: str
    command: str
    date: str
    results: str


@cache
def measurements() -> tuple[Measurement, ...]:
    """Every row of the table, validated."""
    rows = tomllib.loads(TABLE.read_text(encoding="utf-8"))["measurement"]
    return tuple(Measurement.model_validate(row) for row in rows)


def row(key: str, model: str = "", cpu: CpuKind = "bf16") -> Measurement:
    """The row measuring ``key`` of ``model`` on a CPU of kind ``cpu``; KeyError naming them
    when the table has none (a planning bug, not a site's input)."""
    for found in measurements():
        if (found.key, found.model, found.cpu) == (key, model, cpu):
            return found
    raise KeyError(f"{TABLE.name} has no row {key!r} for model {model!r} on cpu {cpu!r}")


def has(key: str, model: str = "", cpu: CpuKind = "bf16") -> bool:
    """Whether the table measures ``key`` of ``model`` on a CPU of kind ``cpu``."""
    return any((m.key, m.model, m.cpu) == (key, model, cpu) for m in measurements())


def measured(key: str, model: str = "", cpu: CpuKind = "bf16") -> float:
    """The value of :func:`row`."""
    return row(key, model, cpu).value


def models_measured(key: str, cpu: CpuKind) -> frozenset[str]:
    """The models the table has ``key`` for on a CPU of kind ``cpu``."""
    return frozenset(m.model for m in measurements() if m.key == key and m.cpu == cpu)
