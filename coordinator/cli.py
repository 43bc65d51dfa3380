"""``coordinator``: wiring only; each command lives in ``coordinator/commands/<name>.py``."""

from __future__ import annotations

import typer

from shared.cli_support import register_commands, run_app

COMMANDS = ("version", "keys", "run", "evaluate", "demo")

app = typer.Typer(
    name="coordinator",
    help="Collect, verify and aggregate site exports; run cross-site validation.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Keep sub-commands even when only one is registered."""


register_commands(app, "coordinator.commands", COMMANDS)


def main() -> None:
    run_app(app)
