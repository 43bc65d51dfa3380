"""A stage the kernel killed is reported on the next run, with its memory and the fix.

Before a stage runs, ``running.json`` in its folder records the process (pid and start time)
and, sampled every few seconds while it runs, the peak resident memory of the process and its
children. A stage that ends, well or badly, removes it (a failure writes ``stage.json`` with
its error). So a marker whose process is gone means the process died without a word. The
marker also holds the machine's boot time and the kernel's count of out-of-memory kills
(``oom_kill`` in ``/proc/vmstat``) when the stage started, so the next run tells the three
causes apart: the kernel's OOM killer (the count moved: it says at how many GB, after how many
minutes, and what setting to change), a machine restart, or a SIGKILL from outside (a session,
container or scheduler that ended; the count did not move, so the memory fix would be wrong).
A run stopped with SIGTERM (``kill``, a service manager, a scheduler) or Ctrl-C unwinds
instead: its marker is removed, so the next run resumes without a report.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import psutil

from protocol.base import ProtocolModel
from shared.atomic import atomic_write_text
from shared.records import read_record_file

RUNNING_FILE = "running.json"
SAMPLE_SECONDS = 1.0  # how often the peak is sampled
WRITE_EVERY = 5  # samples between updates of running.json


class RunningMarker(ProtocolModel):
    """A stage in progress: which process, since when, and its peak memory so far."""

    stage: str
    pid: int
    process_started: float  # psutil create_time: a reused pid is another process
    started_at: datetime
    sampled_at: datetime
    peak_rss_gb: float
    boot_time: float | None = None  # the machine's boot (epoch s) when the stage started
    oom_kills: int | None = None  # the kernel's OOM-kill count then; None where unreadable

    @property
    def minutes(self) -> float:
        return (self.sampled_at - self.started_at).total_seconds() / 60


def boot_time() -> float | None:
    """When this machine booted (epoch seconds); None where unknown."""
    try:
        return float(psutil.boot_time())
    except (psutil.Error, OSError, RuntimeError):
        return None


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has ended since boot (Linux
    ``/proc/vmstat``, machine-wide); None where the kernel does not say."""
    try:
        vmstat = Path("/proc/vmstat").read_text()
    except OSError:
        return None
    for line in vmstat.splitlines():
        name, _, value = line.partition(" ")
        if name == "oom_kill":
            return int(value)
    return None


def _rss_gb(process: psutil.Process) -> float:
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return total / 1024**3


def release_memory() -> bool:
    """Hand what earlier stages freed back to the OS before the next stage starts: collect
    Python's garbage, then glibc's ``malloc_trim`` (freed heap pages otherwise stay resident
    and add to every later stage's peak: measured on the English sparse run, the adapt stage
    peaked at 6.7 GB in the pipeline against 3.9 GB alone). False where there is no glibc."""
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def _reset_high_water_mark() -> bool:
    """Linux: start this process's VmHWM (its own peak RSS) afresh; False where it can't."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _high_water_mark_gb() -> float:
    """This process's peak RSS since the last reset (Linux VmHWM); 0 where unknown."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    return 0.0


def _write(folder: Path, marker: RunningMarker) -> None:
    atomic_write_text(folder / RUNNING_FILE, marker.model_dump_json(indent=2) + "\n")


class PeakMemory:
    """The peak resident memory (GB) of this process and its children while a stage ran:
    sampled every second (children included), and on Linux the kernel's own high-water mark
    of the process, reset when the stage starts."""

    def __init__(self, gb: float) -> None:
        self.gb = gb


TERMINATED_EXIT = 128 + signal.SIGTERM
"""The exit status of a run stopped by SIGTERM, as a shell reports it."""


@contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """In the main thread, turn SIGTERM into ``SystemExit(143)`` for the block, so that its
    ``finally`` clauses run (Python's default SIGTERM ends the process where it stands)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(TERMINATED_EXIT)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def running_marker(folder: Path, stage: str, every: float = SAMPLE_SECONDS) -> Iterator[PeakMemory]:
    """Keep ``running.json`` up to date while the block runs; remove it afterwards. The peak
    memory it yields is final when the block ends (a last sample is taken then)."""
    process = psutil.Process(os.getpid())
    release_memory()
    exact = _reset_high_water_mark()  # the kernel's own peak catches what sampling misses
    now = datetime.now(UTC)
    marker = RunningMarker(
        stage=stage, pid=process.pid, process_started=process.create_time(), started_at=now,
        sampled_at=now, peak_rss_gb=round(_rss_gb(process), 2), boot_time=boot_time(),
        oom_kills=oom_kills(),
    )  # fmt: skip
    peak = PeakMemory(marker.peak_rss_gb)
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder, marker)
    stop = threading.Event()

    def sample() -> None:
        nonlocal marker
        samples = 0
        while not stop.wait(every):
            peak.gb = max(peak.gb, round(_rss_gb(process), 2))
            samples += 1
            if samples % WRITE_EVERY == 0:
                marker = marker.model_copy(
                    update={"peak_rss_gb": peak.gb, "sampled_at": datetime.now(UTC)}
                )
                _write(folder, marker)

    sampler = threading.Thread(target=sample, name=f"rss-{stage}", daemon=True)
    sampler.start()
    try:
        with sigterm_unwinds():
            yield peak
    finally:
        stop.set()
        sampler.join()
        last = max(_rss_gb(process), _high_water_mark_gb() if exact else 0.0)
        peak.gb = max(peak.gb, round(last, 2))
        (folder / RUNNING_FILE).unlink(missing_ok=True)


def _alive(marker: RunningMarker) -> bool:
    try:
        return psutil.Process(marker.pid).create_time() == marker.process_started
    except psutil.Error:
        return False


def killed_marker(folder: Path) -> RunningMarker | None:
    """The marker of a run that died in ``folder`` (its process is gone); None otherwise."""
    marker = read_record_file(RunningMarker, folder / RUNNING_FILE)
    return None if marker is None or _alive(marker) else marker


RESTART_SLACK_S = 5.0  # boot times read at different moments differ by rounding


def stopped_message(stage: str, seconds: float, how: str) -> str:
    """What an operator reads when a stage was stopped on purpose (``how``: "SIGTERM",
    "Ctrl-C"): what is kept and how to go on."""
    return (
        f"the {stage} stage was stopped ({how}) after {seconds / 60:.0f} min; finished stages "
        "are kept, and generation and training continue from their last saved note, epoch or "
        "checkpoint: run the same command again to go on"
    )


def killed_message(marker: RunningMarker, fix: str) -> str:
    """Why the last run of a stage died without a record, from the kernel's evidence:
    "the adapt stage was killed at 23.6 GB after 31 min ...; fix: ..." where the OOM killer
    fired (or nothing says otherwise), a restart or a stop from outside where it did not."""
    ran = (
        f"the {marker.stage} stage (pid {marker.pid}, started "
        f"{marker.started_at:%Y-%m-%d %H:%M} UTC, last seen after {marker.minutes:.0f} min at "
        f"{marker.peak_rss_gb:.1f} GB)"
    )
    booted = boot_time()
    if (
        marker.boot_time is not None
        and booted is not None
        and booted > marker.boot_time + RESTART_SLACK_S
    ):
        return (
            f"{ran} ended when the machine restarted: not a memory fault; this run starts "
            "it again from the last finished stage"
        )
    kills = oom_kills()
    if marker.oom_kills is not None and kills is not None and kills == marker.oom_kills:
        return (
            f"{ran} was stopped from outside (SIGKILL: a session, container or scheduler "
            "that ended), not by memory: the kernel's out-of-memory killer has not fired since "
            "it started; this run starts it again from the last finished stage"
        )
    cause = (
        "the kernel's out-of-memory killer fired while it ran"
        if marker.oom_kills is not None and kills is not None
        else "no record written: most likely the kernel's out-of-memory killer"
    )
    return (
        f"the {marker.stage} stage was killed at {marker.peak_rss_gb:.1f} GB after "
        f"{marker.minutes:.0f} min (pid {marker.pid}, started "
        f"{marker.started_at:%Y-%m-%d %H:%M} UTC, {cause}); fix: {fix}"
    )
