"""What every Flower process of ours runs with, on either side: environment, argv, errors.

The coordinator starts SuperLinks (and, for a local run, SuperNodes); a site starts its own
SuperNode with ``site-agent join``. Both build the SuperNode's command line here.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path

from shared.errors import ConfigError, ToolkitError

QUIET_FLOWER = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1"}


class DeploymentError(ToolkitError):
    """A Flower process did not start or a run did not finish."""

    exit_code = 7


def flower_env(flwr_home: Path, repo_root: Path | None = None) -> dict[str, str]:
    """Environment for every Flower process: quiet, own FLWR_HOME, one thread per process."""
    env = {**os.environ, **QUIET_FLOWER, "FLWR_HOME": str(flwr_home)}
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if repo_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo_root), env.get("PYTHONPATH")) if p)
    return env


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def node_config(values: Mapping[str, object]) -> str:
    """The ``--node-config`` string of a SuperNode (unset values left out)."""
    return " ".join(f'{k}="{v}"' for k, v in values.items() if v is not None)


def supernode_argv(
    superlink: str,
    runtime_port: int,
    config: str,
    *,
    root_certificates: Path | None,
    auth_private_key: Path | None,
    insecure: bool,
) -> list[str]:
    """``flower-supernode`` with TLS and SuperNode auth, or ``--insecure``.

    ``runtime_port`` 0 picks a free local port for the ClientApp runtime API.
    """
    port = runtime_port or free_port()
    argv = ["flower-supernode", "--superlink", superlink, "--port", str(port)]
    argv += ["--node-config", config]
    if insecure:
        return [*argv, "--insecure"]
    if root_certificates is None or auth_private_key is None:
        raise ConfigError(
            "TLS needs root-certificates and SuperNode auth needs auth-private-key in "
            "[federation]; fix: add both (or pass --insecure for a test on this machine)"
        )
    return [
        *argv,
        "--root-certificates", str(root_certificates),
        "--auth-supernode-private-key", str(auth_private_key),
    ]  # fmt: skip
