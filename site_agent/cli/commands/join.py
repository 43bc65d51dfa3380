"""``site-agent join`` (start the site's SuperNode) and ``site-agent auth-key``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared.cli_support import AllowInsecureRemoteFlag, InsecureFlag
from site_agent.federation.join import join as join_federation
from site_agent.federation.join import load_join_config
from site_agent.site_setup import new_auth_key


def register(app: typer.Typer) -> None:
    @app.command()
    def join(
        superlink: Annotated[str, typer.Option(help="SuperLink Fleet API address host:port.")],
        site_config: Annotated[Path, typer.Option(help="site.toml with a \\[federation] table.")],
        insecure: InsecureFlag = False,
        allow_insecure_remote: AllowInsecureRemoteFlag = False,
    ) -> None:
        """Start this site's SuperNode and serve the coordinator's rounds until stopped."""
        join_federation(
            load_join_config(site_config),
            superlink,
            insecure=insecure,
            allow_insecure_remote=allow_insecure_remote,
            on_status=lambda line: typer.echo(line, err=True),
        )

    @app.command("auth-key")
    def auth_key(
        out: Annotated[Path, typer.Option(help="Private key path; the .pub goes beside it.")],
        force: Annotated[
            bool, typer.Option("--force", help="Replace an existing key (re-register it).")
        ] = False,
    ) -> None:
        """Create the SuperNode authentication key (ECDSA P-384, OpenSSH format)."""
        public = new_auth_key(out, force=force)
        typer.echo(f"private key: {out} (keep at the site)")
        typer.echo(f"public key: {public} (send to the coordinator)")
