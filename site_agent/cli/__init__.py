"""``site-agent``: wiring only; each command lives in ``site_agent/cli/commands/<name>.py``;
the run config and the closing summary live beside them in ``site_agent/cli/`` (site set-up
itself is ``site_agent/site_setup.py``)."""

from __future__ import annotations

import typer

from shared.cli_support import run_app
from site_agent.cli.commands import (
    annotate,
    audit,
    demo_sites,
    evaluate,
    init,
    join,
    models,
    synthesize,
    validate,
)

COMMANDS = (init, validate, synthesize, audit, evaluate, models, join, annotate, demo_sites)
"""In the order ``site-agent --help`` lists them; each module's ``register`` adds its commands."""

app = typer.Typer(
    name="site-agent",
    help="Run a hospital's de-identification synthesis pipeline on its own machine.",
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
