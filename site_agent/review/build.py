"""``site-agent review``'s plain function: gather, render, write the page atomically in the
work dir, never inside the outbox or a bundle."""

from __future__ import annotations

from pathlib import Path

from shared.atomic import atomic_write_text
from shared.errors import UsageError
from site_agent.review.facts import OUTBOX, gather
from site_agent.review.page import render_page
from site_agent.review.spend import evaluation_spend

REVIEW_PAGE = Path("review") / "release-review.html"
"""Where the page goes, relative to the work dir."""


def _outside_exports(out: Path, work_dir: Path, bundle_dir: Path) -> None:
    resolved = out.resolve()
    for forbidden in ((work_dir / OUTBOX).resolve(), bundle_dir.resolve()):
        if resolved.is_relative_to(forbidden):
            raise UsageError(
                f"{out}: the review page holds real notes and may not be written inside "
                f"{forbidden}, which is exported; fix: choose a path outside it"
            )


def write_review(
    work_dir: Path,
    out: Path | None = None,
    sample: int = 5,
    seed: int = 0,
    site_config: Path | None = None,
) -> Path:
    """Write the release review page for the bundle the export stage last built; returns it.
    ``site_config`` (optional) gives the evaluation accountant its policy."""
    facts = gather(work_dir)
    target = out or work_dir / REVIEW_PAGE
    _outside_exports(target, work_dir, facts.bundle_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        target, render_page(facts, evaluation_spend(work_dir, site_config), sample, seed)
    )
    return target
