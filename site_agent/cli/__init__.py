"""``site-agent``: wiring only; each command lives in ``site_agent/cli/commands/<name>.py``;
the run config and the closing summary live beside them in ``site_agent/cli/`` (site set-up
itself is ``site_agent/site_setup.py``)."""

from __future__ import annotations

from shared.cli_support import new_app, run_app
from site_agent.cli.commands import (
    annotate,
    approve,
    audit,
    demo_sites,
    evaluate,
    init,
    join,
    models,
    privacy_budget,
    review,
    synthesize,
    validate,
)

COMMANDS = (
    init,
    validate,
    synthesize,
    review,
    approve,
    audit,
    evaluate,
    models,
    join,
    privacy_budget,
    annotate,
    demo_sites,
)
"""In the order ``site-agent --help`` lists them; each module's ``register`` adds its commands."""

app = new_app(
    "site-agent",
    "Run a hospital's de-identification synthesis pipeline on its own machine.",
    COMMANDS,
)


def main() -> None:
    run_app(app)
