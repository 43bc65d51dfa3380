"""``coordinator``: wiring only; each command lives in ``coordinator/commands/<name>.py``."""

from __future__ import annotations

import typer

from coordinator.commands import demo, evaluate, keys, run, version
from shared.cli_support import run_app

COMMANDS = (version, keys, run, evaluate, demo)
"""In the order ``coordinator --help`` lists them; each module's ``register`` adds its commands."""

app = typer.Typer(
    name="coordinator",
    help="Collect, verify and aggregate site exports; run cross-site validation.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Keep sub-commands even when only one is registered."""


for _command in COMMANDS:
    _command.register(app)


def main() -> None:
    run_app(app)
