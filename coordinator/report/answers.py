"""The answers a reader opens the report for, before any matrix: which model to use at each
site and overall, how far synthetic-trained models are from each site's gold baseline, what
was excluded, and whether every privacy audit passed. Token F1 decides "best"."""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.report.tables import model_names, site_ids, value
from protocol.rounds import FederationReport

METRIC = "token_f1"


@dataclass(frozen=True)
class SiteBest:
    """The best synthetic-trained model at one site, and the site's gold-trained baseline."""

    site_id: str
    model: str | None
    f1: float | None
    low: float | None
    high: float | None
    gold: float | None

    @property
    def gap(self) -> float | None:
        """Best synthetic minus gold (negative: synthetic is behind)."""
        return None if self.f1 is None or self.gold is None else self.f1 - self.gold


def best_per_site(report: FederationReport) -> list[SiteBest]:
    best = []
    for site in site_ids(report):
        scored = [
            (f1, model)
            for model in model_names(report)
            if (f1 := value(report.cell(model, site), METRIC)) is not None
        ]
        gold = value(report.baseline(site), METRIC)
        if not scored:
            best.append(SiteBest(site, None, None, None, None, gold))
            continue
        f1, model = max(scored, key=lambda pair: (pair[0], pair[1]))
        cell = report.cell(model, site)
        assert cell is not None and cell.metrics is not None
        est = cell.metrics.token_f1
        best.append(SiteBest(site, model, f1, est.low, est.high, gold))
    return best


def best_overall(report: FederationReport) -> tuple[str, float, int] | None:
    """The model with the highest mean token F1 over the sites that scored it, preferring
    models scored at more sites; (model, mean, sites scored)."""
    candidates = []
    for model in model_names(report):
        scores = [
            f1 for s in site_ids(report) if (f1 := value(report.cell(model, s), METRIC)) is not None
        ]
        if scores:
            candidates.append((len(scores), sum(scores) / len(scores), model))
    if not candidates:
        return None
    n, mean, model = max(candidates)
    return model, mean, n


def _gap_words(gap: float) -> str:
    if abs(gap) < 0.005:
        return "level with"
    return f"{abs(gap):.3f} {'below' if gap < 0 else 'above'}"


def summary_points(report: FederationReport) -> list[str]:
    """Plain sentences, most important first."""
    points = []
    overall = best_overall(report)
    n_sites = len(report.sites)
    if overall is None:
        points.append("No model was scored at any site.")
    else:
        model, mean, n = overall
        points.append(
            f"Best model overall: {model}, mean token F1 {mean:.3f} over {n} of {n_sites} site(s)."
        )
    gaps = []
    for best in best_per_site(report):
        if best.model is None or best.f1 is None:
            points.append(f"{best.site_id}: no model was scored there.")
            continue
        line = (
            f"{best.site_id}: best is {best.model}, token F1 {best.f1:.3f} "
            f"[{best.low:.3f}, {best.high:.3f}]"
        )
        if best.gap is not None and best.gold is not None:
            gaps.append(best.gap)
            line += f", {_gap_words(best.gap)} the site's gold-trained baseline ({best.gold:.3f})"
        points.append(line + ".")
    if gaps:
        mean_gap = sum(gaps) / len(gaps)
        points.append(
            f"Synthetic vs gold: the best synthetic-trained model is on average "
            f"{_gap_words(mean_gap)} the gold-trained baselines (mean gap {mean_gap:+.3f} "
            f"token F1 over {len(gaps)} site(s))."
        )
    points.append(_exclusions(report))
    points.append(_audits(report))
    return points


def _exclusions(report: FederationReport) -> str:
    if not report.exclusions:
        return "Exclusions: none; every site took part in every phase."
    listed = "; ".join(f"{e.site_id} at {e.phase} ({e.reason})" for e in report.exclusions)
    return f"Exclusions ({len(report.exclusions)}): {listed}."


def _audits(report: FederationReport) -> str:
    verdicts = {s.site_id: s.audit_passed for s in report.sites}
    passed = [s for s, v in verdicts.items() if v]
    if verdicts and len(passed) == len(verdicts):
        return f"Privacy audits: all {len(passed)} passed."
    failed = [s for s, v in verdicts.items() if v is False]
    missing = [s for s, v in verdicts.items() if v is None]
    parts = [f"{len(passed)} of {len(verdicts)} passed"]
    if failed:
        parts.append(f"FAILED at {', '.join(failed)}")
    if missing:
        parts.append(f"no export from {', '.join(missing)}")
    return "Privacy audits: NOT all passed: " + "; ".join(parts) + "."


def best_rows(report: FederationReport) -> list[list[str]]:
    """One row per site: the best model, its token F1 and interval, gold, gap."""
    rows = [["site", "best model", "token F1 [95% CI]", "gold baseline", "gap"]]
    for b in best_per_site(report):
        score = "-" if b.f1 is None else f"{b.f1:.3f} [{b.low:.3f}, {b.high:.3f}]"
        gold = "-" if b.gold is None else f"{b.gold:.3f}"
        gap = "-" if b.gap is None else f"{b.gap:+.3f}"
        rows.append([b.site_id, b.model or "-", score, gold, gap])
    return rows
