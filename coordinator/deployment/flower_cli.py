"""The few Flower CLI calls the coordinator makes: connection, SuperNode registration, run.

Flower 1.41 keeps SuperLink connections in ``$FLWR_HOME/config.toml`` (``[superlink.<name>]``
with ``address`` and ``root-certificates`` or ``insecure``); ``flwr run APP CONNECTION``
submits the app to that SuperLink's Control API.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

from coordinator.deployment.processes import CONNECTION, stream_lines
from shared.atomic import atomic_write_text
from shared.flower_env import DeploymentError
from shared.transport_policy import Transport


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))


def write_connection(flwr_home: Path, transport: Transport) -> Path:
    """``config.toml`` with one default connection, as the transport policy decided it."""
    lines = ["[superlink]", f'default = "{CONNECTION}"', "", f"[superlink.{CONNECTION}]"]
    lines.append(f"address = {_toml_value(transport.address)}")
    if transport.root_certificates is not None:
        lines.append(f"root-certificates = {_toml_value(str(transport.root_certificates))}")
    else:
        lines.append("insecure = true")
    path = flwr_home / "config.toml"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def register_supernode(env: dict[str, str], public_key: Path) -> int:
    """Register a SuperNode's auth public key with the SuperLink; returns its node id."""
    argv = ["flwr", "supernode", "register", str(public_key), CONNECTION, "--format", "json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    try:
        answer = json.loads(done.stdout[done.stdout.index("{") :])
    except ValueError:
        answer = {}
    if not answer.get("success"):
        raise DeploymentError(
            f"could not register SuperNode key {public_key}: "
            f"{done.stdout.strip()} {done.stderr.strip()}"
        )
    return int(answer["node-id"])


def registered_supernodes(env: dict[str, str]) -> dict[str, int]:
    """``{auth public key (OpenSSH): node id}`` of the SuperNodes the SuperLink knows."""
    argv = ["flwr", "supernode", "list", CONNECTION, "--format", "json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    try:
        answer = json.loads(done.stdout[done.stdout.index("{") :])
    except ValueError:
        answer = {}
    found = {}
    for node in answer.get("nodes", []):
        key, node_id = node.get("owner-public-key") or node.get("public-key"), node.get("node-id")
        if isinstance(key, str) and node_id is not None:
            found[" ".join(key.split()[:2])] = int(node_id)
    return found


def write_run_config(path: Path, values: Mapping[str, object]) -> Path:
    atomic_write_text(path, "".join(f"{k} = {_toml_value(v)}\n" for k, v in values.items()))
    tomllib.loads(path.read_text())  # fail here, not inside flwr, on a bad value
    return path


def run_app(
    env: dict[str, str],
    app_dir: Path,
    run_config: Path,
    on_line: Callable[[str], None],
    timeout: float,
) -> int:
    """``flwr run APP coordinator --stream``; streams its output to ``on_line``."""
    argv = ["flwr", "run", str(app_dir), CONNECTION, "--stream", "--run-config", str(run_config)]
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        return _wait_streaming(process, on_line, timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_streaming(
    process: subprocess.Popen[str], on_line: Callable[[str], None], timeout: float
) -> int:
    import threading

    result: list[int] = []
    reader = threading.Thread(target=lambda: result.append(stream_lines(process, on_line)))
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        process.kill()
        reader.join()
        raise DeploymentError(f"flwr run did not finish in {timeout:.0f}s")
    return result[0]
