"""The site's evaluation policy applied: a per-run budget, minimum support, figures on a grid,
and a log of every model scored. (Under ``mechanism = "gaussian"``, the default, the figures
are the noisy ones of ``noisy_figures.py`` and each model is charged to the privacy ledger of
``accountant.py`` first; :func:`released` is the exact path of ``mechanism = "none"``.)

Scoring a coordinator's model on the test split answers a question about private notes (a
model that tags one candidate name asks whether that name is in the split). What leaves is
therefore what :class:`~site_agent.federation.policy.EvaluationPolicy` allows: per run at most
``max_models_per_run`` models, each returning figures rounded to ``grid``, per-label recall
only for labels with ``min_support`` gold mentions. The log (JSON lines under the work dir)
holds, per run, the bound the policy gives, then one line per model: its SHA-256 and exactly
the figures returned, or the reason it was refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from protocol import Corpus
from protocol.rounds import Estimate, ModelMetrics, PrivacySpend
from site_agent.federation.layout import SiteFailure
from site_agent.federation.policy import EvaluationPolicy

log = logging.getLogger(__name__)


def model_sha256(folder: Path) -> str:
    """One hash over a model folder's file names and bytes (what was scored)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def on_grid(value: float, grid: float) -> float:
    """``value`` rounded to the nearest multiple of ``grid`` (halves up), within [0, 1]."""
    if grid <= 0:
        return value
    steps = int(value / grid + 0.5)
    return min(1.0, max(0.0, round(steps * grid, 10)))


def _estimate(estimate: Estimate, policy: EvaluationPolicy) -> Estimate:
    value = on_grid(estimate.value, policy.grid)
    if not policy.intervals:
        return Estimate(value=value, low=value, high=value)
    if policy.grid <= 0:
        return estimate  # full precision: as measured
    low, high = (on_grid(x, policy.grid) for x in (estimate.low, estimate.high))
    return Estimate(value=value, low=min(low, value), high=max(high, value))


def support(gold: Corpus) -> Counter[str]:
    """Gold mentions per label."""
    return Counter(span.label for doc in gold.documents for span in doc.spans)


def check_support(gold: Corpus, policy: EvaluationPolicy) -> None:
    """Refuse to score at all on a split too small for any figure to hide one mention."""
    n_spans = sum(support(gold).values())
    if n_spans < policy.min_support or len(gold) < policy.min_support:
        log.warning(
            "evaluation refused: the test split has %d documents and %d gold spans, fewer than "
            "[federation.evaluation] min_support = %d",
            len(gold),
            n_spans,
            policy.min_support,
        )
        raise SiteFailure("insufficient_support")


def released(metrics: ModelMetrics, gold: Corpus, policy: EvaluationPolicy) -> ModelMetrics:
    """What the policy lets leave of ``metrics`` scored on ``gold``."""
    counts = support(gold)
    return ModelMetrics(
        token_f1=_estimate(metrics.token_f1, policy),
        span_overlap_f1=_estimate(metrics.span_overlap_f1, policy),
        document_leakage=_estimate(metrics.document_leakage, policy),
        label_recall={
            label: on_grid(recall, policy.grid)
            for label, recall in metrics.label_recall.items()
            if counts[label] >= policy.min_support
        },
        n_documents=metrics.n_documents,
    )


class EvaluationLog:
    """The site's append-only record of every model scored, one JSON object a line."""

    def __init__(self, path: Path, run_id: int, policy: EvaluationPolicy) -> None:
        self.path, self.run_id, self.policy = path, run_id, policy

    def entries(self) -> list[dict[str, Any]]:
        """This run's entries so far."""
        if not self.path.is_file():
            return []
        rows = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("run_id") == self.run_id:
                rows.append(row)
        return rows

    def scored(self) -> int:
        """Models this run has had scored (each costs one of ``max_models_per_run``)."""
        return sum(1 for row in self.entries() if "sha256" in row and "metrics" in row)

    def remaining(self) -> int:
        return max(0, self.policy.max_models_per_run - self.scored())

    def open_run(self, n_labels: int, n_documents: int) -> None:
        """Write (once per run) the bound this policy gives, and log it."""
        if any("bound" in row for row in self.entries()):
            return
        bound = self.policy.bound(n_labels, n_documents)
        log.info("%s", bound)
        self._append({"bound": bound, "policy": self.policy.model_dump(mode="json")})

    def record(
        self,
        model: str,
        sha256: str | None,
        metrics: ModelMetrics | None,
        refused: str | None,
        privacy: PrivacySpend | None = None,
    ) -> None:
        """One model: exactly the figures returned (or the refusal) and, under noise, the
        test split's privacy spend after it."""
        row: dict[str, Any] = {"model": model, "sha256": sha256}
        if metrics is not None:
            row["metrics"] = metrics.model_dump(mode="json")
        if refused is not None:
            row["refused"] = refused
        if privacy is not None:
            row["privacy"] = privacy.model_dump(mode="json")
            log.info(
                "privacy budget of the test split: epsilon %.3g of %.3g spent (delta %.1g), "
                "%d models scored, %d left",
                privacy.epsilon_spent,
                privacy.epsilon_budget,
                privacy.delta,
                privacy.models_scored,
                privacy.models_left,
            )
        self._append(row)

    def _append(self, row: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        stamped = {"time": datetime.now(UTC).isoformat(), "run_id": self.run_id, **row}
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(stamped, sort_keys=True) + "\n")
