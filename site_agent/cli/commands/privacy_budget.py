"""``site-agent privacy-budget``: what the coordinators' scoring has spent of the test split's
lifetime privacy budget (the accountant's ledger, read without changing it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared.errors import VerificationError
from site_agent.federation.accountant import budget_lines
from site_agent.federation.join import load_join_config
from site_agent.federation.layout import SiteFailure


def register(app: typer.Typer) -> None:
    @app.command("privacy-budget")
    def privacy_budget(
        site_config: Annotated[Path, typer.Option(help="site.toml with a \\[federation] table.")],
    ) -> None:
        """Show each test split's privacy spend: epsilon spent and left, models scored."""
        config = load_join_config(site_config)
        try:
            lines = budget_lines(config.work_dir, config.evaluation, config.test_split)
        except SiteFailure as failure:
            ledger = config.work_dir / config.evaluation.ledger
            raise VerificationError(
                f"{ledger}: the privacy ledger cannot be read ({failure.code}); every "
                "evaluation is refused until it can. Fix: restore it from a backup (deleting "
                "it would reset the test split's budget)"
            ) from failure
        for line in lines:
            typer.echo(line)
