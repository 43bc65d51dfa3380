"""What the federation's evaluations have spent of the test split's privacy budget, for the
review page, read from the evaluation accountant's ledger
(``site_agent/federation/accountant.py``) without a lock and without writing.

Other accountants can add their lines with :func:`register_spend_reader`: a reader takes the
work dir and the site.toml (None when the review was given only a work dir) and returns lines
to show, or None when it has nothing to say. The page says plainly when no reader has
anything, so the absence of figures is never read as a spend of zero.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ToolkitError


@dataclass(frozen=True)
class SpendLine:
    """One figure of an accountant: its name, its value as shown, and what it means."""

    figure: str
    value: str
    meaning: str = ""


SpendReader = Callable[[Path, Path | None], list[SpendLine] | None]
SPEND_READERS: dict[str, SpendReader] = {}
"""Accountant name -> reader over the work dir and the site.toml."""


def register_spend_reader(name: str, reader: SpendReader) -> SpendReader:
    SPEND_READERS[name] = reader
    return reader


def evaluation_spend(work_dir: Path, site_config: Path | None = None) -> dict[str, list[SpendLine]]:
    """Every registered accountant's lines for this work dir (those with something to say)."""
    found = {name: reader(work_dir, site_config) for name, reader in SPEND_READERS.items()}
    return {name: lines for name, lines in found.items() if lines}


def ledger_spend(work_dir: Path, site_config: Path | None) -> list[SpendLine] | None:
    """The evaluation accountant's spend per test split, under the site's ``[federation.
    evaluation]`` when the site.toml has one, else under the defaults (and said so)."""
    from site_agent.federation.accountant import read_spend
    from site_agent.federation.join import load_join_config
    from site_agent.federation.layout import SiteFailure
    from site_agent.federation.policy import EvaluationPolicy

    policy, under = EvaluationPolicy(), "the default [federation.evaluation]"
    # no [federation] table: the defaults, as the federation would use
    with contextlib.suppress(ToolkitError):
        if site_config is not None:
            policy, under = load_join_config(site_config).evaluation, str(site_config)
    if policy.mechanism != "gaussian":
        exact = f"exact figures are returned ({under}): nothing is spent or limited"
        return [SpendLine("mechanism", "none", exact + "; no privacy guarantee")]
    if not (work_dir / policy.ledger).exists():
        return [SpendLine("ledger", "empty", "no coordinator has scored a model on this "
                          "site's test split yet: nothing spent")]  # fmt: skip
    try:
        spends = read_spend(work_dir, policy)
    except SiteFailure:
        return [SpendLine("ledger", "unreadable", f"{work_dir / policy.ledger} cannot be read; "
                          "every evaluation is refused until it is restored")]  # fmt: skip
    lines = []
    for key, s in spends.items():
        split = f"test split {key[:12]}"
        lines += [
            SpendLine(f"{split}: epsilon spent", f"{s.epsilon_spent:.3f} of {s.epsilon_budget:g}",
                      f"lifetime differential-privacy budget at delta {s.delta:g} ({under})"),
            SpendLine(f"{split}: models scored", f"{s.models_scored} ({s.models_left} left)",
                      f"each costs epsilon {s.epsilon_per_model:.3f}; refused once spent"),
            SpendLine(f"{split}: noise", f"sd {s.noise_sd:.4f}",
                      "Gaussian noise on every figure returned for one model"),
        ]  # fmt: skip
    return lines or None


register_spend_reader("evaluation accountant", ledger_spend)
