"""How many CPU threads generation should use now: the cores other processes leave free.

On a 2-core machine with another job on one core, transformers with 2 threads fell from
168 to 18 tokens/s (Gemma 3 270M, top-p, batch 16) while 1 thread kept 95 whatever the load:
oversubscribed threads wait on each other. With ``[generation] cpu_threads`` unset, the
transformers backend re-reads the load before every batch (psutil: all cores' busy time minus
this process's own since the last batch) and uses the cores left idle, at least one.
"""

from __future__ import annotations

import os

import psutil


class ThreadBudget:
    """Threads for the next batch, from what the machine did during the last one."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = cores or len(os.sched_getaffinity(0))
        self.process = psutil.Process()
        psutil.cpu_percent(interval=None)  # start both counters
        self.process.cpu_percent(interval=None)

    def others_busy(self) -> float:
        """Cores' worth of CPU used by other processes since the last call."""
        total = psutil.cpu_percent(interval=None) * psutil.cpu_count() / 100.0
        own = self.process.cpu_percent(interval=None) / 100.0
        return max(0.0, total - own)

    def threads(self) -> int:
        return max(1, min(self.cores, round(self.cores - self.others_busy())))
