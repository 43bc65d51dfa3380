"""CPU threads follow the cores other processes leave idle; this process's own work never
counts against it (psutil readings faked, then one real reading)."""

from __future__ import annotations

import threading
import time
from collections import namedtuple

import pytest

from shared import threads as module
from shared.threads import ThreadBudget

Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")
Own = namedtuple("Own", "user system")


class FakeMachine:
    """Cumulative CPU seconds of a machine and of this process, advanced by hand."""

    def __init__(self, cores: int) -> None:
        self.cores, self.busy, self.idle, self.own = cores, 0.0, 0.0, 0.0

    def advance(self, seconds: float, others: float, own: float) -> None:
        """``seconds`` of wall time with ``others`` and ``own`` cores busy."""
        self.busy += (others + own) * seconds
        self.idle += (self.cores - others - own) * seconds
        self.own += own * seconds

    def cpu_times(self) -> Times:
        return Times(self.busy, 0.0, 0.0, self.idle, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def process(self) -> object:
        machine = self

        class Process:
            def cpu_times(self) -> Own:
                return Own(machine.own, 0.0)

        return Process()


@pytest.mark.parametrize(
    ("cores", "others", "own", "expected"),
    [
        (2, 0.0, 0.0, 2),  # idle machine: every core
        (2, 0.0, 2.0, 2),  # all of it was this process: still every core
        (2, 1.0, 0.0, 1),  # another job holds one of two cores
        (2, 2.0, 0.0, 1),  # both busy with others: still one thread
        (4, 2.0, 1.0, 2),  # 3 cores busy, one of them ours: 2 left
        (8, 1.0, 0.0, 7),
    ],
)
def test_threads_are_the_cores_others_leave_idle(
    monkeypatch: pytest.MonkeyPatch, cores: int, others: float, own: float, expected: int
) -> None:
    machine = FakeMachine(cores)
    monkeypatch.setattr(module.psutil, "cpu_times", machine.cpu_times)
    monkeypatch.setattr(module.psutil, "cpu_count", lambda: cores)
    monkeypatch.setattr(module.psutil, "Process", machine.process)
    budget = ThreadBudget(cores=cores)
    machine.advance(10.0, others=others, own=own)
    assert budget.threads() == expected


def test_each_reading_covers_only_the_time_since_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy neighbour that has gone gives the cores back at the next reading, and two
    budgets keep their own windows."""
    machine = FakeMachine(2)
    monkeypatch.setattr(module.psutil, "cpu_times", machine.cpu_times)
    monkeypatch.setattr(module.psutil, "cpu_count", lambda: 2)
    monkeypatch.setattr(module.psutil, "Process", machine.process)
    first = ThreadBudget()
    machine.advance(60.0, others=1.0, own=1.0)
    second = ThreadBudget()
    assert first.threads() == 1
    machine.advance(5.0, others=0.0, own=2.0)
    assert first.threads() == 2 and second.threads() == 2
    assert first.threads() == 2  # no time passed: nothing counted against it


def test_a_real_reading_counts_this_process_threads_as_its_own() -> None:
    """What is subtracted as "own" includes every thread of this process (torch's workers)."""
    import psutil

    process = psutil.Process()
    before = module.read_cpu(process)
    deadline = time.monotonic() + 60.0

    def spin() -> None:  # 0.5 s of this thread's own CPU time, however loaded the machine
        start = time.thread_time()
        while time.thread_time() - start < 0.5 and time.monotonic() < deadline:
            sum(range(1000))

    worker = threading.Thread(target=spin)
    worker.start()
    worker.join()
    after = module.read_cpu(process)
    assert after.own - before.own >= 0.45
    assert after.busy - before.busy >= 0.4
    assert after.total > before.total
