"""``site-agent evaluate --gold G --pred P``: every foundation metric, printed and as JSON."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
