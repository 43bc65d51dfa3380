"""``coordinator version``: print the toolkit version."""

import typer

from shared.provenance import tool_version


def register(app: typer.Typer) -> None:
    @app.command()
    def version() -> None:
        """Print the toolkit version."""
        typer.echo(tool_version())
