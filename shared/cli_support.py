"""What the command-line programs share: the typer app, error-to-exit-code mapping, flags."""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Annotated

import click
import typer
from rich.console import Console
from rich.markup import escape

from shared.errors import ToolkitError, UsageError
from shared.library_noise import quiet_libraries

PATH_ERRORS = (
    FileNotFoundError,
    FileExistsError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
)

err_console = Console(stderr=True)


def new_app(name: str, help_text: str, commands: Iterable[ModuleType] = ()) -> typer.Typer:
    """A typer app that keeps sub-commands even when one is registered, shows help when called
    bare and leaves tracebacks to :func:`run_app`; each of ``commands`` adds its own with
    ``register(app)``."""
    app = typer.Typer(
        name=name, help=help_text, no_args_is_help=True, pretty_exceptions_enable=False
    )
    app.callback()(lambda: None)
    for module in commands:
        module.register(app)
    return app


# The transport flags of `coordinator run` and `site-agent join` (see shared/transport_policy).
InsecureFlag = Annotated[
    bool,
    typer.Option("--insecure", help="No TLS and no SuperNode auth; loopback addresses only."),
]
AllowInsecureRemoteFlag = Annotated[
    bool,
    typer.Option(
        "--allow-insecure-remote",
        help="With --insecure: allow a non-loopback address (trusted networks only).",
    ),
]


def exit_status(result: object) -> int:
    """The process status for what ``app(standalone_mode=False)`` returned.

    Under ``standalone_mode=False`` click *returns* the code of ``typer.Exit``/``ctx.exit``
    (``--help`` gives 0, Ctrl-C 130) instead of raising it; a command that returns normally
    gives None. Anything but an int counts as success.
    """
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    return 0


def report_error(exc: ToolkitError) -> None:
    """``error: <message>`` on stderr; the message is printed literally (``[adapt -> lora_rr]``
    is a field location, not Rich markup)."""
    err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def report_os_error(exc: OSError) -> int:
    """A file the command was pointed at cannot be used: say which, exit as a usage error.

    A full disk (or quota) names the file and asks for space, not for permissions; other I/O
    failures exit 74 (EX_IOERR).
    """
    where = exc.filename if exc.filename is not None else "a file"
    if exc.errno in NO_SPACE:
        folder = Path(str(where)).parent if exc.filename is not None else Path.cwd()
        fix = (
            f"fix: free space on the disk that holds {folder} (df -h {folder}), or write the "
            "output to another disk, then run the command again (nothing half-written was kept)"
        )
    else:
        fix = "fix: check the path and its permissions"
    err_console.print(
        f"[bold red]error:[/] {escape(str(where))}: {escape(exc.strerror or str(exc))}; "
        + escape(fix),
        highlight=False,
        soft_wrap=True,
    )
    return UsageError.exit_code if isinstance(exc, PATH_ERRORS) else 74


def run_app(app: typer.Typer) -> None:
    """Run a typer app and end the process with the status of what happened.

    A ToolkitError ends it with its own exit code and message, a click usage error with 2,
    ``typer.Exit(code)`` with ``code``, a missing or unreadable file with 2.
    """
    quiet_libraries()
    try:
        result = app(standalone_mode=False)
    except ToolkitError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:  # click returns it under standalone_mode=False; kept for safety
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:  # usage errors: 2, with click's own message
        exc.show()
        sys.exit(exc.exit_code)
    except OSError as exc:
        sys.exit(report_os_error(exc))
    sys.exit(exit_status(result))
