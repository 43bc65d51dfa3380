"""``run_app``: every way a command ends becomes the process status an operator sees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer

from shared.cli_support import run_app
from shared.errors import ConfigError

app = typer.Typer(pretty_exceptions_enable=False)


@app.command()
def ok() -> None:
    """Ends normally."""


@app.command()
def exit_with(code: int) -> None:
    raise typer.Exit(code)


@app.command()
def config_error() -> None:
    raise ConfigError("site.toml: [adapt -> lora_rr] unknown field; fix: remove it")


@app.command()
def missing_file(path: Path) -> None:
    path.read_text()


@pytest.mark.parametrize(
    ("argv", "status", "stderr"),
    [
        (["ok"], 0, ""),
        (["--help"], 0, ""),
        (["exit-with", "0"], 0, ""),
        (["exit-with", "3"], 3, ""),
        (["exit-with", "65"], 65, ""),
        (["config-error"], 78, "[adapt -> lora_rr] unknown field"),
        (["missing-file", "nope.txt"], 2, "nope.txt: No such file or directory"),
        (["nope"], 2, "No such command"),
        (["exit-with", "three"], 2, "three"),
    ],
)
def test_run_app_exit_status(
    argv: list[str],
    status: int,
    stderr: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["prog", *argv])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as info:
        run_app(app)
    assert info.value.code == status
    assert stderr in capsys.readouterr().err


def test_quiet_libraries_drops_library_deprecations_and_the_bitsandbytes_kernel_note() -> None:
    import subprocess

    code = (
        "import logging, warnings\n"
        "from shared.cli_support import quiet_libraries\n"
        "quiet_libraries()\n"
        "warnings.warn_explicit('old api', FutureWarning, 'modeling_utils.py', 1, "
        "module='transformers.modeling_utils')\n"
        "warnings.warn_explicit('ours', FutureWarning, 'x.py', 1, module='site_agent.x')\n"
        "logging.getLogger('bitsandbytes.backends.cpu.ops').warning('Failed to load kernel')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "old api" not in done.stderr and "Failed to load" not in done.stderr
    assert "ours" in done.stderr  # our own warnings still show
