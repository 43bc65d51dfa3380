"""The privacy accountant of a site's test split: a lifetime budget kept in the work dir.

Every model scored on the test split releases figures with Gaussian noise
(``noisy_figures.py``) and spends a fixed share of the split's lifetime budget, counted in
zero-concentrated differential privacy (zCDP, Bun and Steinke 2016): Gaussian releases add up
exactly in ``rho``, and a total ``rho`` gives (epsilon, delta)-DP with
``epsilon = rho + 2 * sqrt(rho * ln(1 / delta))``. The lifetime budget (epsilon, delta) of
``[federation.evaluation]`` is turned into a ``rho`` once; each model costs ``1 /
lifetime_models`` of it, and a model that would take the spend past the budget is refused
(``privacy_budget_exhausted``) before anything is scored.

The spend is kept in ``<work-dir>/federation/privacy-ledger.json`` (``EvaluationPolicy.ledger``)
per test split (keyed by a digest of its note texts), across federation runs, coordinators and
restarts: a new run id does not reset it. The ledger is read and written under an exclusive
lock (a ``.lock`` file beside it, opened without following links) and replaced atomically; a
ledger that cannot be read refuses every query (``privacy_ledger_unreadable``) rather than
starting again from zero. The spend is reserved before the model is scored, so a crash
between the two never under-counts.

:func:`read_spend` is the reader other tools (the operator's ``site-agent privacy-budget``, a
review page) use; it takes no lock and never writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from protocol import Corpus
from protocol.rounds import PrivacySpend
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from site_agent.federation.layout import SiteFailure
from site_agent.federation.policy import EvaluationPolicy
from site_agent.federation.stage_records import stage_artifact
from site_agent.federation.zcdp import epsilon_of

log = logging.getLogger(__name__)
TOLERANCE = 1e-9  # float slack when the last model's share meets the budget exactly


def split_key(split: Corpus) -> str:
    """The ledger's key of a test split: a SHA-256 over its sorted note texts (a new id or
    re-annotated span keeps the account; another set of notes opens another one)."""
    digest = hashlib.sha256()
    for text in sorted(doc.text for doc in split.documents):
        digest.update(f"{len(text)}:".encode() + text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass(frozen=True)
class Account:
    """One test split's spend: ``rho`` used and models scored, over its whole life."""

    rho_spent: float = 0.0
    models: int = 0


def spend(policy: EvaluationPolicy, account: Account, n_documents: int) -> PrivacySpend:
    """What ``account`` means under ``policy``: spent, left, and the noise on each figure."""
    total, per_model = policy.rho(), policy.rho_per_model()
    left_models = max(0, math.floor((total - account.rho_spent) / per_model + TOLERANCE))
    spent = epsilon_of(account.rho_spent, policy.delta)
    return PrivacySpend(
        mechanism="gaussian",
        epsilon_budget=policy.epsilon,
        delta=policy.delta,
        epsilon_spent=min(spent, policy.epsilon),
        epsilon_left=max(0.0, policy.epsilon - spent),
        models_scored=account.models,
        models_left=left_models,
        epsilon_per_model=epsilon_of(per_model, policy.delta),
        noise_sd=policy.noise_sd(n_documents),
    )


class Ledger:
    """The work dir's privacy ledger: one :class:`Account` per test split."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(lock, flags, 0o600)
        except OSError as exc:
            log.error("privacy ledger lock %s cannot be opened (a link?): %s", lock, exc)
            raise SiteFailure("privacy_ledger_unreadable") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self) -> dict[str, Any]:
        if self.path.is_symlink():
            log.error("privacy ledger %s is a link; refusing every query", self.path)
            raise SiteFailure("privacy_ledger_unreadable")
        if not self.path.exists():
            return {"splits": {}}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("splits"), dict):
                raise ValueError("no 'splits' table")
            return data
        except (OSError, ValueError) as exc:
            log.error(
                "privacy ledger %s cannot be read (%s); refusing every query. Fix: restore it "
                "from a backup; deleting it would reset the test split's budget",
                self.path,
                exc,
            )
            raise SiteFailure("privacy_ledger_unreadable") from exc

    def read_splits(self) -> dict[str, Any]:
        """Every split's row as the ledger holds it now (no lock; for display)."""
        splits: dict[str, Any] = self._read()["splits"]
        return splits

    def charge(self, key: str, policy: EvaluationPolicy, n_documents: int) -> PrivacySpend:
        """Reserve one model's share of the split's budget, or refuse with
        ``privacy_budget_exhausted``; returns the spend after the charge."""
        with self._locked():
            data = self._read()
            row = data["splits"].get(key, {})
            account = _account(row)
            total, per_model = policy.rho(), policy.rho_per_model()
            if account.rho_spent + per_model > total * (1 + TOLERANCE):
                left = spend(policy, account, n_documents)
                log.warning(
                    "evaluation refused: the test split's privacy budget is spent "
                    "(epsilon %.3g of %.3g at delta %.1g, %d models scored); fix: none from "
                    "the coordinator; the site's operator may raise [federation.evaluation] "
                    "epsilon or lifetime_models, which weakens the guarantee",
                    left.epsilon_spent,
                    policy.epsilon,
                    policy.delta,
                    account.models,
                )
                raise SiteFailure("privacy_budget_exhausted")
            after = Account(account.rho_spent + per_model, account.models + 1)
            now = datetime.now(UTC).isoformat()
            data["splits"][key] = {
                "rho_spent": after.rho_spent,
                "models": after.models,
                "first_charged": row.get("first_charged", now),
                "last_charged": now,
                "epsilon_spent": epsilon_of(after.rho_spent, policy.delta),
                "delta": policy.delta,
                "n_documents": n_documents,
            }
            atomic_write_text(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")
        return spend(policy, after, n_documents)


def read_spend(work_dir: Path, policy: EvaluationPolicy) -> dict[str, PrivacySpend]:
    """Every test split's spend in ``work_dir``'s ledger under ``policy``, by split key (the
    reader for the operator's tools; an absent ledger is an empty dict)."""
    splits = Ledger(work_dir / policy.ledger).read_splits()
    return {
        key: spend(policy, _account(row), int(row.get("n_documents", 0)))
        for key, row in sorted(splits.items())
        if isinstance(row, dict)
    }


def _account(row: dict[str, Any]) -> Account:
    return Account(float(row.get("rho_spent", 0.0)), int(row.get("models", 0)))


def spend_of(ledger: Ledger, key: str, policy: EvaluationPolicy, n_documents: int) -> PrivacySpend:
    """The spend of split ``key`` as ``ledger`` holds it now."""
    return spend(policy, _account(ledger.read_splits().get(key, {})), n_documents)


def budget_lines(
    work_dir: Path, policy: EvaluationPolicy, test_split: Path | None = None
) -> list[str]:
    """The operator's view of the ledger in ``work_dir``: one line per test split (the
    current one, ``test_split`` or the split stage's, marked), read without a lock."""
    if policy.mechanism != "gaussian":
        return [
            'no differential privacy: [federation.evaluation] mechanism = "none" returns '
            "exact figures (rounded only); nothing is spent or limited across runs"
        ]
    current = _current_split(work_dir, test_split)
    spends = read_spend(work_dir, policy)
    if current is not None and current[0] not in spends:
        spends[current[0]] = spend(policy, Account(), current[1])
    lines = [
        f"lifetime budget per test split: ({policy.epsilon:g}, {policy.delta:g})-differential "
        f"privacy per note, {policy.lifetime_models} models "
        f"(ledger {work_dir / policy.ledger})"
    ]
    for key, used in spends.items():
        mark = " (the current test split)" if current and key == current[0] else ""
        lines.append(
            f"test split {key[:12]}{mark}: epsilon {used.epsilon_spent:.3g} spent, "
            f"{used.epsilon_left:.3g} left; {used.models_scored} models scored, "
            f"{used.models_left} left; noise sd {used.noise_sd:.3g} on each figure"
        )
    return lines


def _current_split(work_dir: Path, test_split: Path | None) -> tuple[str, int] | None:
    path = test_split or stage_artifact(work_dir, "split", "test")
    if path is None or not path.is_file():
        return None
    split = read_corpus(path)
    return split_key(split), len(split)
