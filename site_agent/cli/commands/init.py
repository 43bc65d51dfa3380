"""``site-agent init``: a site's Ed25519 signing key and a starter ``site.toml``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from site_agent.language_detection import corpus_language_from_text
from site_agent.site_setup import check_site_id, corpus_language, initialise_site


def register(app: typer.Typer) -> None:
    @app.command()
    def init(
        site_id: Annotated[str, typer.Option("--site-id", help="Short id of this site.")],
        keys_dir: Annotated[Path, typer.Option("--keys-dir", help="Folder for the key pair.")],
        config: Annotated[
            Path, typer.Option("--config", help="Where to write the starter site.toml.")
        ] = Path("site.toml"),
        corpus: Annotated[
            Path, typer.Option("--corpus", help="Gold corpus path written into site.toml.")
        ] = Path("data/train.jsonl"),
        language: Annotated[
            str | None,
            typer.Option(
                "--language",
                help="Corpus language code (en, es, sv...); default: the --locale's, else "
                "detected from the --corpus notes' text.",
            ),
        ] = None,
        locale: Annotated[
            str | None,
            typer.Option(
                "--locale",
                help="Faker locale of the surrogates (en_US, es_ES...); default follows "
                "--language. en_US also reads 7/22 as month/day.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace an existing key and site.toml.")
        ] = False,
    ) -> None:
        """Create the signing key that signs export bundles, and a site.toml to edit."""
        console = Console()
        check_site_id(site_id, "--site-id")  # before reading the corpus
        if language is None and locale is None:
            guess = corpus_language_from_text(corpus)
            language = guess.language
            console.print(f"language {language} detected from {corpus} ({guess.explain()})",
                          markup=False, highlight=False, soft_wrap=True)  # fmt: skip
        chosen = corpus_language(language, locale)
        created = initialise_site(site_id, keys_dir, config, corpus, force=force, language=chosen)
        console.print(f"signing key id [bold]{created.key_id}[/]")
        console.print(f"private key {created.private_key} (keep it on this machine)", markup=False)
        console.print(
            f"public key  {created.public_key} (give it to the coordinator)", markup=False
        )
        console.print(f"site config {created.config}", markup=False)
        console.print(f"language {chosen.language}, surrogate locale {chosen.locale}", markup=False)
