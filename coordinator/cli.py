"""``coordinator``: wiring only; each command lives in ``coordinator/commands/<name>.py``."""

from __future__ import annotations

from coordinator.commands import demo, evaluate, keys, run, version
from shared.cli_support import new_app, run_app

COMMANDS = (version, keys, run, evaluate, demo)
"""In the order ``coordinator --help`` lists them; each module's ``register`` adds its commands."""

app = new_app(
    "coordinator",
    "Collect, verify and aggregate site exports; run cross-site validation.",
    COMMANDS,
)


def main() -> None:
    run_app(app)
