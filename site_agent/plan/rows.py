"""Rows in flight for continuous batching, from the measured curve of useful tok/s.

More rows in flight make each step's matrix products larger and the useful rate higher, up to
what the machine's cores and memory give. ``benchmarks/useful_throughput.py --rows 8 16 32``
measures the curve per generator and kind of CPU as a speed-up over static batches of 8 (the
rate the unit costs were measured at), side by side in one run; the calibration table keeps
it as ``generator.refill_speedup_rows_<rows>``. The recipe takes the fastest measured rows
whose key-value cache fits beside the generate stage's measured peak, and the pre-flight
prices the notes at that speed-up. A generator or CPU kind without a curve keeps
``[generation] batch_size``'s default and is priced without a speed-up.
"""

from __future__ import annotations

from site_agent.adapt.cost import CpuKind
from site_agent.calibration import has, measured, row

MEASURED_ROWS = (8, 16, 32)
"""The rows in flight ``useful_throughput.py`` measures."""
CACHE_GB_PER_ROW = 0.1
"""Headroom planned per row in flight for its key-value cache beside the generate stage's
measured peak (8 rows): both embedded generators hold under 50 kB per token of context in
float32, so a row of 2,048 tokens is about 0.1 GB."""


def _key(rows: int) -> str:
    return f"generator.refill_speedup_rows_{rows}"


def curve(model: str, cpu: CpuKind) -> dict[int, float]:
    """Measured speed-up over static batches of 8, by rows in flight (empty: not measured)."""
    return {r: measured(_key(r), model, cpu) for r in MEASURED_ROWS if has(_key(r), model, cpu)}


def rows_in_flight(
    model: str, cpu: CpuKind, given: int | None, default: int, spare_gb: float
) -> tuple[int, float, str]:
    """(rows in flight, speed-up the notes are priced at, why) for a refilling engine;
    ``given``: ``[generation] batch_size`` when site.toml sets it; ``spare_gb``: memory the
    plan leaves beside the generate stage's measured peak."""
    measured_curve = curve(model, cpu)
    if given is not None:
        known = [r for r in measured_curve if r <= given]
        speedup = measured_curve[max(known)] if known else 1.0
        return given, speedup, f"batch_size = {given} set: {given} notes in flight"
    if not measured_curve:
        return default, 1.0, f"{default} notes in flight (no measured curve for {model} here)"
    fits = {r: s for r, s in measured_curve.items() if (r - 8) * CACHE_GB_PER_ROW <= spare_gb}
    if not fits:
        return default, 1.0, f"{default} notes in flight: no memory for a wider batch"
    rows = max(fits, key=lambda r: fits[r])
    figures = ", ".join(f"{r}: {s:g}x" for r, s in sorted(measured_curve.items()))
    source = row(_key(rows), model, cpu)
    return (
        rows,
        fits[rows],
        (
            f"{rows} notes in flight, refilled as they end: useful tok/s over static batches of 8 "
            f"measured {figures} ({source.command}, {source.date})"
        ),
    )
