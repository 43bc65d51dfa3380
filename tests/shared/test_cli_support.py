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


def test_quiet_libraries_drops_library_deprecations_and_the_bitsandbytes_kernel_note(
    tmp_path: Path,
) -> None:
    """A redirected log: bitsandbytes itself emits its kernels-community note (made to take
    the branch of a CPU with AVX512-BF16, where it does), and the note is not in the log,
    while a real bitsandbytes warning, our own warnings and other warnings still are."""
    import subprocess

    code = (
        "import importlib, logging, warnings\n"
        "from shared.library_noise import quiet_libraries\n"
        "quiet_libraries()\n"
        "warnings.warn_explicit('old api', FutureWarning, 'modeling_utils.py', 1, "
        "module='transformers.modeling_utils')\n"
        "warnings.warn_explicit('ours', FutureWarning, 'x.py', 1, module='site_agent.x')\n"
        "import bitsandbytes.functional as f\n"
        "import bitsandbytes.backends.cpu.ops as ops\n"
        "f.has_avx512bf16 = lambda: True\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')  # torch's note that the kernels are re-registered\n"
        "    importlib.reload(ops)\n"
        "logging.getLogger('bitsandbytes.backends.cpu.ops').warning('a real 4-bit problem')\n"
        "logging.getLogger('bitsandbytes').warning('a real bitsandbytes problem')\n"
    )
    log = tmp_path / "run.log"
    with log.open("w") as stderr:
        subprocess.run([sys.executable, "-c", code], stderr=stderr, check=True, timeout=120)
    text = log.read_text()
    assert "kernels-community" not in text and "No module named 'kernels'" not in text
    assert "old api" not in text
    assert "ours" in text  # our own warnings still show
    assert "a real 4-bit problem" in text and "a real bitsandbytes problem" in text
