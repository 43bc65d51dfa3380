"""``coordinator keys tls|register``: deployment certificates and the site registry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coordinator.deployment.keys import create_tls, register_site


def register(app: typer.Typer) -> None:
    keys = typer.Typer(help="Certificates, SuperNode keys and the site registry.")
    app.add_typer(keys, name="keys")

    @keys.command("tls")
    def tls(
        out: Annotated[Path, typer.Option(help="Folder for ca.crt, superlink.crt and keys.")],
        host: Annotated[
            list[str], typer.Option(help="IP or DNS name the sites use (repeat for several).")
        ],
    ) -> None:
        """Create a CA and a SuperLink certificate with these hosts as SANs."""
        files = create_tls(out, host)
        typer.echo(f"CA: {files.ca_certificate} (give to every site)")
        typer.echo(f"SuperLink: {files.certificate}, {files.key} (keep on the SuperLink host)")

    @keys.command("register")
    def register_cmd(
        registry: Annotated[Path, typer.Option(help="registry.json (created if missing).")],
        site_id: Annotated[str, typer.Option(help="The site's id.")],
        signing_key: Annotated[Path, typer.Option(help="The site's Ed25519 public key (PEM).")],
        auth_key: Annotated[
            Path | None, typer.Option(help="The site's SuperNode auth public key (.pub).")
        ] = None,
    ) -> None:
        """Register a site's public keys (received out of band) with the coordinator."""
        entry = register_site(registry, site_id, signing_key, auth_key)
        typer.echo(f"registered {entry.site_id} (signing key {entry.signing_key_id})")
