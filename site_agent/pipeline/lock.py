"""One pipeline run per work dir: an exclusive ``flock`` on ``<work_dir>/.lock``.

Two runs over one work dir would interleave their stage folders and fail later with a
misleading message. The lock is taken before anything runs and held until the run ends; the
operating system releases it when the process dies, so a killed run leaves no stale lock. The
file holds who has it (pid, host, command, start time) so a second run can name them.

The file is opened without following a symbolic link (``O_NOFOLLOW``) and must be a plain file
with one name: the run writes into it, and a link planted there would have it truncate whatever
the link points at.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from shared.errors import UsageError

LOCK_FILE = ".lock"


class WorkDirBusy(UsageError):
    """Another process runs the pipeline over the same work dir."""


def _holder(path: Path) -> str:
    try:
        who = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {who['pid']} on {who['host']}, started {who['started']} (`{who['command']}`)"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _open_lock_file(path: Path) -> IO[str]:
    """``path`` opened for reading and writing, created if absent, never through a link."""
    fix = f"fix: remove {path} (rm {path}); the next run creates its own"
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path} is a symbolic link: refused, never followed; {fix}") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "not a plain file" if not stat.S_ISREG(info.st_mode) else "a hard link"
        raise UsageError(f"{path} is {what}: refused, the run would write into it; {fix}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "r+", encoding="utf-8")


@contextmanager
def work_dir_lock(work_dir: Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``work_dir`` for the ``with`` block; raise
    :class:`WorkDirBusy` naming the holder when another process has it."""
    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / LOCK_FILE
    handle = _open_lock_file(path)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WorkDirBusy(
                f"{work_dir} is in use by {_holder(path)}: it holds {path}; fix: wait for that "
                "run to finish (or stop it), or give this run another work_dir"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": datetime.now(UTC).isoformat(timespec="seconds"),
                    "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200],
                }
            )
        )
        handle.flush()
        yield path
    finally:
        handle.close()  # releases the lock
