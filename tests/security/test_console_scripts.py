"""Exit codes as operators and schedulers see them: the installed console scripts, run as
real processes (CliRunner does not go through ``main()``, where ``typer.Exit`` under
``standalone_mode=False`` is returned rather than raised).

``PYTHONPATH`` points the installed ``site-agent``/``coordinator`` at this checkout. Every
case fails before any network use, or dials 127.0.0.1:1 (nothing listens on port 1).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BAD_SPAN = {"id": "a", "text": "Juan", "spans": [{"start": 0, "end": 9, "label": "PER"}]}


@dataclass(frozen=True)
class Case:
    """``argv`` after the script name; ``{w}`` is the workspace folder (also the cwd)."""

    name: str
    script: str
    argv: str  # split on spaces
    code: int
    stderr: tuple[str, ...] = ()


CASES = [
    Case("site-help", "site-agent", "--help", 0),
    Case("site-join-help", "site-agent", "join --help", 0),
    Case("site-unknown-command", "site-agent", "nope", 2, ("No such command",)),
    Case("site-unknown-option", "site-agent", "validate --nope", 2, ("--nope",)),
    Case(
        "validate-invalid-corpus",
        "site-agent",
        "validate {w}/bad.jsonl",
        65,
        ("invalid corpus", "lies outside the text"),
    ),
    Case("validate-missing-file", "site-agent", "validate {w}/nope.jsonl", 2, ("nope.jsonl",)),
    Case(
        "synthesize-unknown-field",
        "site-agent",
        "synthesize --site-config {w}/site-typo.toml",
        78,
        ("lora_rr", "unknown field"),
    ),
    Case(
        "init-would-overwrite",
        "site-agent",
        "init --site-id s --keys-dir {w}/keys --config {w}/site-typo.toml --language en",
        2,
        ("already exist", "fix:"),
    ),
    Case(
        "audit-without-synthetic",
        "site-agent",
        "audit --real {w}/bad.jsonl --out {w}/audit",
        2,
        ("--synthetic",),
    ),
    Case(
        "evaluate-missing-gold",
        "site-agent",
        "evaluate --gold {w}/nope.jsonl --pred {w}/bad.jsonl",
        2,
        ("nope.jsonl",),
    ),
    Case(
        "models-verify-not-installed",
        "site-agent",
        "models verify nosuch --cache {w}/cache",
        5,
        ("registry.json",),
    ),
    Case(
        "annotate-apply-missing-corpus",
        "site-agent",
        "annotate apply {w}/model {w}/nope.jsonl --out {w}/o.jsonl",
        2,
        ("nope.jsonl",),
    ),
    Case(
        "auth-key-under-a-file",
        "site-agent",
        "auth-key --out {w}/afile/node.key",
        2,
        ("afile", "fix:"),
    ),
    Case(
        "join-without-tls",
        "site-agent",
        "join --superlink 10.0.0.1:9093 --site-config {w}/join-no-tls.toml",
        78,
        ("no root certificates", "root-certificates", "--insecure"),
    ),
    Case(
        "join-insecure-remote",
        "site-agent",
        "join --superlink 10.0.0.1:9093 --site-config {w}/join-no-tls.toml --insecure",
        2,
        ("not a loopback address", "--allow-insecure-remote"),
    ),
    Case(
        "join-bad-address",
        "site-agent",
        "join --superlink 10.0.0.1 --site-config {w}/join-no-tls.toml",
        2,
        ("not HOST:PORT",),
    ),
    Case(
        "join-missing-config",
        "site-agent",
        "join --superlink 127.0.0.1:1 --site-config {w}/nope.toml",
        78,
        ("nope.toml",),
    ),
    Case(
        "join-supernode-fails",
        "site-agent",
        "join --superlink 127.0.0.1:1 --site-config {w}/join-tls.toml",
        7,
        ("transport: TLS", "SuperNode auth on", "flower-supernode ended with status"),
    ),
    Case("coordinator-help", "coordinator", "--help", 0),
    Case("coordinator-version", "coordinator", "version", 0),
    Case("coordinator-unknown-command", "coordinator", "nope", 2, ("No such command",)),
    Case("keys-tls-without-host", "coordinator", "keys tls --out {w}/tls", 2),
    Case(
        "keys-register-missing-key",
        "coordinator",
        "keys register --registry {w}/r.json --site-id a --signing-key {w}/nope.pub",
        2,
        ("nope.pub",),
    ),
    Case(
        "demo-sites-out-under-a-file", "site-agent", "demo-sites --out {w}/afile/x", 2, ("afile",)
    ),
    Case(
        "demo-without-sites",
        "coordinator",
        "demo --sites {w}/nope --out {w}/out",
        78,
        ("nope", "demo-sites"),
    ),
    Case(
        "demo-timeout-zero",
        "coordinator",
        "demo --sites {w}/nope --out {w}/out --timeout 0",
        2,
        ("--timeout",),
    ),
    Case("run-missing-config", "coordinator", "run --config {w}/nope.toml", 78, ("nope.toml",)),
    Case(
        "run-unknown-field",
        "coordinator",
        "run --config {w}/coordinator-typo.toml",
        78,
        ("adress", "[superlink]"),
    ),
    Case(
        "run-insecure-in-config",
        "coordinator",
        "run --config {w}/coordinator-insecure.toml",
        78,
        ("insecure", "--insecure"),
    ),
    Case(
        "run-without-tls",
        "coordinator",
        "run --config {w}/coordinator-no-tls.toml",
        78,
        ("no root certificates", "--root-certificates"),
    ),
    Case(
        "run-insecure-remote",
        "coordinator",
        "run --config {w}/coordinator-no-tls.toml --insecure",
        2,
        ("not a loopback address", "--allow-insecure-remote"),
    ),
    Case(
        "run-ca-not-a-file",
        "coordinator",
        "run --config {w}/coordinator-tls.toml --root-certificates {w}/nope.crt",
        78,
        ("nope.crt", "is not a file"),
    ),
    Case(
        "run-tls-superlink-down",
        "coordinator",
        "run --config {w}/coordinator-tls.toml",
        7,
        ("transport: TLS", "SuperNode keys of the registry registered", "flwr run ended"),
    ),
    Case(
        "run-insecure-loopback-superlink-down",
        "coordinator",
        "run --config {w}/coordinator-no-tls.toml --insecure --superlink 127.0.0.1:1",
        7,
        ("transport: INSECURE", "SuperNode keys not registered", "flwr run ended"),
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs for every case: a bad corpus, configs with typos, garbage keys."""
    w = tmp_path_factory.mktemp("scripts")
    (w / "bad.jsonl").write_text(json.dumps(BAD_SPAN) + "\n", encoding="utf-8")
    (w / "site-typo.toml").write_text(
        'site_id = "s"\n[corpus]\npath = "bad.jsonl"\n[adapt]\nlora_rr = 3\n', encoding="utf-8"
    )
    (w / "afile").write_text("", encoding="utf-8")
    (w / "ca.crt").write_text("not a certificate\n", encoding="utf-8")
    (w / "node.key").write_text("not a key\n", encoding="utf-8")
    (w / "registry.json").write_text("{}", encoding="utf-8")
    (w / "encoder").mkdir()
    site = f'[federation]\nsite-id = "s"\nwork-dir = "site"\nruntime-port = {free_port()}\n'
    (w / "join-no-tls.toml").write_text(site, encoding="utf-8")
    (w / "join-tls.toml").write_text(
        site + 'root-certificates = "ca.crt"\nauth-private-key = "node.key"\n', encoding="utf-8"
    )
    federation = (
        '[federation]\nregistry = "registry.json"\nbase-model = "encoder"\noutput-dir = "out"\n'
    )
    superlinks = {
        "typo": 'adress = "127.0.0.1:1"\n',
        "insecure": 'address = "127.0.0.1:1"\ninsecure = true\n',
        "no-tls": 'address = "10.0.0.1:9093"\n',
        "tls": 'address = "127.0.0.1:1"\nroot-certificates = "ca.crt"\n',
    }
    for name, superlink in superlinks.items():
        (w / f"coordinator-{name}.toml").write_text(
            f"[superlink]\n{superlink}{federation}", encoding="utf-8"
        )
    return w


def run_script(script: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run an installed console script on this checkout; stop its whole process group."""
    executable = shutil.which(script)
    if executable is None:
        pytest.skip(f"{script} is not installed (pip install -e .)")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "FLWR_HOME": str(cwd / "flwr-home"),
        "FLWR_TELEMETRY_ENABLED": "0",
        "FLWR_DISABLE_UPDATE_CHECK": "1",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }
    process = subprocess.Popen(
        [executable, *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{script} {' '.join(argv)} did not end in 60 s:\n{out}\n{err}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # no child outlives the case (supernode)
            os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_console_script_exit_code(case: Case, workspace: Path) -> None:
    argv = [a.replace("{w}", str(workspace)) for a in case.argv.split()]
    done = run_script(case.script, argv, workspace)
    shown = f"{case.script} {' '.join(argv)}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == case.code, shown
    for words in case.stderr:
        assert words in done.stderr, shown
    if case.code not in (0, 2):  # a toolkit error: one "error:" line with the fix, no traceback
        assert "Traceback" not in done.stderr, shown
