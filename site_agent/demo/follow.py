"""Follow the demo sites' pipeline logs and report each stage as it passes.

Every site's ``site-agent synthesize`` writes to its own ``synthesize.log``; the pipeline
prints one rule per stage it runs (``──── 03 pseudonymise … ────``) and one line per stage it
reuses (``= adapt: unchanged, skipped``). :class:`LogFollower` reads the new lines of every log
about once a second on a thread and hands each stage event, prefixed with its site, to
``on_line``: a redirected ``demo-sites`` log shows every site's progress, in plain lines.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

RAN = re.compile(r"^[─━\-\s]*(\d{2}) ([a-z][a-z-]*)(?:\s|$)")
SKIPPED = re.compile(r"^= ([a-z][a-z-]*): unchanged, skipped")


def stage_event(line: str) -> str | None:
    """``"03 pseudonymise started"`` / ``"adapt skipped (unchanged)"``, or None."""
    if found := RAN.match(line):
        return f"{found.group(1)} {found.group(2)} started"
    if found := SKIPPED.match(line):
        return f"{found.group(1)} skipped (unchanged)"
    return None


class LogFollower:
    """Reads the lines appended to each site's log; a context manager that follows on a thread
    and reads what is left once more when it stops."""

    def __init__(
        self, logs: dict[str, Path], on_line: Callable[[str], None], every_s: float = 1.0
    ) -> None:
        self.logs = logs
        self.on_line = on_line
        self.every_s = every_s
        self._offsets = dict.fromkeys(logs, 0)
        self._partial = dict.fromkeys(logs, b"")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="demo-log-follower", daemon=True)

    def poll(self) -> None:
        """Report the stage events in the complete lines appended since the last poll."""
        with self._lock:
            for site, path in self.logs.items():
                self._poll_one(site, path)

    def _poll_one(self, site: str, path: Path) -> None:
        try:
            with path.open("rb") as log:
                log.seek(self._offsets[site])
                data = log.read()
        except FileNotFoundError:
            return
        self._offsets[site] += len(data)
        *lines, self._partial[site] = (self._partial[site] + data).split(b"\n")
        for raw in lines:
            event = stage_event(raw.decode("utf-8", "replace").split("\r")[-1])
            if event is not None:
                self.on_line(f"  {site}: {event}")

    def _follow(self) -> None:
        while not self._stop.wait(self.every_s):
            self.poll()

    def __enter__(self) -> LogFollower:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()
