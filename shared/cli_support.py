"""What both command-line programs share: error-to-exit-code mapping and command registration."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable

import typer
from rich.console import Console

from shared.errors import ToolkitError

err_console = Console(stderr=True)


def register_commands(app: typer.Typer, package: str, modules: Iterable[str]) -> None:
    """Import ``package.<module>`` for each module and let it add its commands to ``app``."""
    for module in modules:
        importlib.import_module(f"{package}.{module}").register(app)


def quiet_libraries() -> None:
    """Keep library chatter (weight-loading reports, hub progress bars) out of operators' logs.

    Set before transformers is imported; an operator's own settings win.
    """
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def run_app(app: typer.Typer) -> None:
    """Run a typer app; a ToolkitError ends the process with its own exit code and message."""
    quiet_libraries()
    try:
        app(standalone_mode=False)
    except ToolkitError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except Exception as exc:  # click usage errors carry their own exit code
        code = getattr(exc, "exit_code", None)
        if code is None:
            raise
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        sys.exit(code)
