"""How many CPU threads the next piece of work should use: the cores other processes leave idle.

On a 2-core machine with another job on one core, transformers with 2 threads fell from
168 to 18 tokens/s (Gemma 3 270M, top-p, batch 16) while 1 thread kept 95 whatever the load:
oversubscribed threads wait on each other. A :class:`ThreadBudget` reads, between two calls,
how busy all cores were and how much of that was this process itself, and offers the cores
the *other* processes left idle, at least one.

This process's own work does not count against it. The 1-minute load average, which the
annotator used before, does count it: after a stage that kept both cores busy, an annotator
trained in the same process (an experiment, ``site-agent synthesize``) saw a load of 2 on an
otherwise idle machine and ran on one thread, 1.41x slower than on two
(``benchmarks/annotator_threads.py``).

Readings are per instance (``psutil.cpu_times`` deltas), so two budgets in one process do not
disturb each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class CpuReading:
    """Cumulative CPU seconds: all cores (``total``, ``busy``) and this process (``own``)."""

    total: float
    busy: float
    own: float


def read_cpu(process: psutil.Process) -> CpuReading:
    """All cores' CPU seconds so far (busy = not idle or waiting on I/O) and this process's."""
    times = psutil.cpu_times()
    # guest time is already counted in user time (psutil's cpu_percent does the same)
    total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    busy = total - times.idle - getattr(times, "iowait", 0.0)
    own = process.cpu_times()
    return CpuReading(total=total, busy=busy, own=own.user + own.system)


def cpu_count() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class ThreadBudget:
    """Threads for the next piece of work, from what the machine did since the last reading."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = cores or cpu_count()
        self.process = psutil.Process()
        self.last = read_cpu(self.process)

    def others_busy(self) -> float:
        """Cores' worth of CPU used by other processes since the last call (or the start)."""
        now = read_cpu(self.process)
        total, busy, own = (
            now.total - self.last.total, now.busy - self.last.busy, now.own - self.last.own
        )  # fmt: skip
        self.last = now
        if total <= 0:
            return 0.0
        wall = total / max(1, psutil.cpu_count() or 1)  # seconds per core over the window
        return max(0.0, (busy - own) / wall)

    def threads(self) -> int:
        """The cores other processes left idle since the last call, at least one."""
        return max(1, min(self.cores, round(self.cores - self.others_busy())))
