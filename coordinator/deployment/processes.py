"""Start, watch and stop the Flower processes of a deployment (SuperLink, SuperNodes, runs).

Every process is started here with telemetry and update checks off, recorded, and stopped by
id together with the children it spawned (SuperExec, ServerApp, ClientApp processes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shared.flower_env import DeploymentError

CONNECTION = "coordinator"


def repo_root() -> Path:
    """The Flower App folder: the checkout whose pyproject has ``[tool.flwr.app]``."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.exists() or "[tool.flwr.app]" not in pyproject.read_text(encoding="utf-8"):
        raise DeploymentError(
            f"{root}: no pyproject.toml with [tool.flwr.app]; fix: run from a source checkout"
        )
    return root


def descendants(pid: int) -> list[int]:
    """Child processes of ``pid``, recursively (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM this process and its descendants, then SIGKILL whatever is left."""
        family = [self.popen.pid, *descendants(self.popen.pid)]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in family:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace)
            family = [p for p in family if Path(f"/proc/{p}").exists() and not _zombie(p)]
            if not family:
                return

    def tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@dataclass
class ProcessGroup:
    """Every process a command started; ``stop_all`` ends them in reverse order."""

    log_dir: Path
    processes: list[ManagedProcess] = field(default_factory=list)

    def start(
        self, name: str, argv: list[str], env: dict[str, str], cwd: Path | None = None
    ) -> ManagedProcess:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log:
            popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        process = ManagedProcess(name, popen, log_path)
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            process.stop()


def wait_for_port(host: str, port: int, process: ManagedProcess, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.alive():
            raise DeploymentError(f"{process.name} exited early:\n{process.tail()}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
            return
        time.sleep(0.3)
    raise DeploymentError(f"{process.name} did not open {host}:{port} in {timeout:.0f}s")


def stream_lines(process: subprocess.Popen[str], on_line: Callable[[str], None]) -> int:
    assert process.stdout is not None
    for line in process.stdout:
        on_line(line.rstrip("\n"))
    return process.wait()
