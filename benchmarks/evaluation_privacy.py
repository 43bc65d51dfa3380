"""The boundary attack on a site's test split, and what the privacy noise costs the report.

    python benchmarks/evaluation_privacy.py                  # 200 probes, 20 utility trials
    python benchmarks/evaluation_privacy.py --probes 2000 --trials 0 --attack gaussian

A made-up test split of ``--notes`` notes (default 250), each naming one patient once. The
coordinator's "models" tag a set of words as PER (inference is that rule; everything else is
the site's real scoring path: ``site_agent.federation.handlers.Scoring`` with its ledger,
noise, rounding and log).

**Attack** (issue 50). Calibrate: binary-search the number k of words from a candidate list
(names in the split mixed with absent ones) whose tagging moves a released figure across a
rounding boundary; then probe: tag the k - 1 calibrated words plus one candidate X and say
"X is in the split" when the figure lands on the high side. Half the probes are names in the
split, half absent ones (each mentioned at most once). The coordinator's advantage is
TPR - FPR over the probes. Rows:

- ``none``: ``mechanism = "none"`` with the old defaults (grid 0.1, min_support 50), on PER
  recall as in the issue: the attack is exact (advantage 1);
- ``gaussian``: the default policy, on token F1. Each probe costs the default's share of the
  lifetime budget; the real budget refuses every model past ``lifetime_models`` (48), so to
  take >= 200 probes the benchmark raises ``lifetime_models`` and scales ``epsilon`` with it so
  that every model's noise and cost stay the default's. The bound column is what one model's
  answer allows any test: ``2 Phi(mu / 2) - 1`` with ``mu = sqrt(2 rho_model)`` (a model's
  answer is a Gaussian mechanism of that zCDP cost) and, looser, ``(e^eps - 1) / (e^eps + 1)
  + delta`` from the per-model epsilon.

**Utility.** 24 models on the same split under the default policy (fresh ledger each trial):
8 "good" ones (each tags 90% of the names), 8 "fair" ones (80%) and 8 "bad" ones (60%, plus a
false tag in 10% of notes). Reported: the exact note-averaged token F1 of each kind, the noise
sd, and the share of pairs of two kinds that the released token F1 puts in the right order.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protocol import Corpus, Document, Span  # noqa: E402
from protocol.rounds import CrossSiteInstruction, ModelMetrics  # noqa: E402
from shared.cpu_features import cpu_features  # noqa: E402
from site_agent.federation.handlers import Scoring  # noqa: E402
from site_agent.federation.layout import SiteFailure, SiteLayout  # noqa: E402
from site_agent.federation.noisy_figures import note_averaged  # noqa: E402
from site_agent.federation.policy import EvaluationPolicy  # noqa: E402
from site_agent.federation.zcdp import epsilon_of  # noqa: E402

LABELS = ("PER",)
FILLER = "ingresa por dolor abdominal; se pauta analgesia y control en consulta."


def split(n_notes: int) -> tuple[Corpus, list[str]]:
    names = [f"Nombre{i:04d}" for i in range(n_notes)]
    docs = []
    for i, name in enumerate(names):
        text = f"Paciente {name} {FILLER} Nota {i}."
        start = text.index(name)
        span = Span(start=start, end=start + len(name), label="PER")
        docs.append(Document(id=f"n{i}", text=text, spans=(span,)))
    return Corpus(documents=tuple(docs)), names


def tag_words(model_dir: Path, corpus: Corpus) -> Corpus:
    """A probe model's inference: every whole-word occurrence of its words becomes PER."""
    words = set(json.loads((model_dir / "words.json").read_text(encoding="utf-8")))
    pattern = re.compile(r"\b\w+\b")
    return Corpus(
        documents=tuple(
            Document(
                id=d.id,
                text=d.text,
                spans=tuple(
                    Span(start=m.start(), end=m.end(), label="PER")
                    for m in pattern.finditer(d.text)
                    if m.group() in words
                ),
            )
            for d in corpus.documents
        )
    )


class Site:
    """One site's scoring path over a fresh work dir; ``ask`` scores one probe model."""

    def __init__(self, root: Path, gold: Corpus, policy: EvaluationPolicy) -> None:
        self.root, self.gold, self.count = root, gold, 0
        layout = SiteLayout("site-a", root, root / "outbox", None, None, evaluation=policy)
        task = CrossSiteInstruction(models=(), labels=LABELS, bootstrap=0, seed=0)
        self.scoring = Scoring(layout, task, run_id=1, gold=gold, infer=tag_words)

    def ask(self, words: list[str]) -> ModelMetrics | None:
        self.count += 1
        # one run (and one log file) per model: the per-run cap never binds, and the log's
        # scan of its own run stays short over thousands of probes
        self.scoring.log.run_id = self.count
        self.scoring.log.path = self.root / "logs" / f"{self.count}.jsonl"
        folder = self.root / "models" / f"m{self.count}"
        folder.mkdir(parents=True)
        (folder / "words.json").write_text(json.dumps(sorted(words)), encoding="utf-8")
        try:
            return self.scoring.score(f"m{self.count}", folder, self.gold, None)
        except SiteFailure:
            return None


Figure = Callable[[ModelMetrics], float]


def calibrate(site: Site, candidates: list[str], figure: Figure) -> tuple[int, float]:
    """The smallest k whose first k candidates give a high figure (binary search), and the
    threshold halfway between the figures at k - 1 and k."""
    low, high = 0, len(candidates)
    answers: dict[int, float] = {}
    first = site.ask([])
    answers[0] = figure(first) if first else 0.0
    while high - low > 1:
        mid = (low + high) // 2
        answer = site.ask(candidates[:mid])
        answers[mid] = figure(answer) if answer else 0.0
        if answers[mid] > answers[0]:
            high = mid
        else:
            low = mid
    top = site.ask(candidates[:high])
    answers[high] = figure(top) if top else 0.0
    return high, (answers[low] + answers[high]) / 2


def attack(
    root: Path, policy: EvaluationPolicy, figure: Figure, n_probes: int, n_notes: int, seed: int
) -> dict[str, float]:
    gold, names = split(n_notes)
    rng = np.random.default_rng(seed)
    absent = [f"Ausente{i:04d}" for i in range(n_notes)]
    candidates = list(rng.permutation(names[: n_notes // 2] + absent[: n_notes // 2]))
    site = Site(root, gold, policy)
    k, threshold = calibrate(site, candidates, figure)
    base = candidates[: k - 1]
    pool = n_notes - n_notes // 2  # a name is asked again (fresh noise) once all were asked
    again = n_probes // 2 > pool
    present = list(rng.choice(names[n_notes // 2 :], n_probes // 2, replace=again))
    missing = list(rng.choice(absent[n_notes // 2 :], n_probes // 2, replace=again))
    said_present: dict[bool, list[bool]] = {True: [], False: []}
    answered = 0
    for word, truth in [(w, True) for w in present] + [(w, False) for w in missing]:
        answer = site.ask([*base, word])
        if answer is not None:
            answered += 1
        said_present[truth].append(answer is not None and figure(answer) > threshold)
    tpr, fpr = np.mean(said_present[True]), np.mean(said_present[False])
    half = len(said_present[True])
    se = math.sqrt((tpr * (1 - tpr) + fpr * (1 - fpr)) / half)
    return {
        "calibration": k,
        "answered": answered,
        "tpr": tpr,
        "fpr": fpr,
        "adv": tpr - fpr,
        "ci": 1.96 * se,
    }


def gaussian_for(probes: int) -> EvaluationPolicy:
    """The default policy with room for ``probes`` models at the default's cost per model."""
    default = EvaluationPolicy()
    lifetime = probes + 64
    rho = default.rho_per_model() * lifetime
    epsilon = epsilon_of(rho, default.delta)
    return EvaluationPolicy(epsilon=epsilon, lifetime_models=lifetime)


def one_model_bounds(policy: EvaluationPolicy) -> tuple[float, float, float]:
    rho = policy.rho_per_model()
    eps = epsilon_of(rho, policy.delta)
    mu = math.sqrt(2 * rho)
    tight = 2 * NormalDist().cdf(mu / 2) - 1
    loose = (math.exp(eps) - 1) / (math.exp(eps) + 1) + policy.delta
    return eps, tight, loose


KINDS = (("good", 0.9, 0.0), ("fair", 0.8, 0.0), ("bad", 0.6, 0.1))
"""(kind, share of the names it tags, share of notes where it tags a number too)."""


def utility(root: Path, n_notes: int, trials: int) -> dict[str, Any]:
    """24 models a trial (8 of each kind) under the default policy; how often the released
    token F1 orders two models of different kinds as their exact figures do."""
    gold, names = split(n_notes)
    rng = np.random.default_rng(1)
    exact: dict[str, list[float]] = {kind: [] for kind, _, _ in KINDS}
    ordered: dict[tuple[str, str], list[bool]] = {}
    for trial in range(trials):
        site = Site(root / f"trial{trial}", gold, EvaluationPolicy())
        released: dict[str, list[float]] = {kind: [] for kind, _, _ in KINDS}
        for kind, share, false_tags in KINDS:
            for _ in range(8):
                words = list(rng.choice(names, int(share * n_notes), replace=False))
                words += [f"{i}" for i in rng.choice(n_notes, int(false_tags * n_notes))]
                answer = site.ask(words)
                assert answer is not None, "the default budget must answer 24 models"
                released[kind].append(answer.token_f1.value)
                predicted = tag_words(site.root / "models" / f"m{site.count}", gold)
                exact[kind].append(note_averaged(gold, predicted)["token_f1"])
        for (better, *_), (worse, *_) in (
            (KINDS[0], KINDS[1]),
            (KINDS[1], KINDS[2]),
            (KINDS[0], KINDS[2]),
        ):
            pairs = [b > w for b in released[better] for w in released[worse]]
            ordered.setdefault((better, worse), []).extend(pairs)
    return {
        "exact": {kind: float(np.mean(values)) for kind, values in exact.items()},
        "sd": EvaluationPolicy().noise_sd(n_notes),
        "ordered": {pair: (float(np.mean(v)), len(v)) for pair, v in ordered.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=250)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--trials", type=int, default=20, help="utility trials (0: none)")
    parser.add_argument(
        "--attack", nargs="*", default=["none", "gaussian"], help="attack rows: none gaussian"
    )
    args = parser.parse_args()
    print(f"CPU: {cpu_features().summary()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        old = EvaluationPolicy(mechanism="none", grid=0.1, min_support=50)
        rows = [
            ("none (grid 0.1)", old, lambda m: m.label_recall.get("PER", 0.0), None),
            ("gaussian (default)", gaussian_for(args.probes), lambda m: m.token_f1.value, 1),
        ]
        rows = [row for row in rows if row[0].split()[0] in args.attack]
        print(f"\nboundary attack: {args.probes} probes on a {args.notes}-note split")
        print(
            "| policy | calibration k | answered | TPR | FPR | advantage (95% CI) "
            "| allowed (one model) |"
        )
        print("|---|---|---|---|---|---|---|")
        for i, (name, policy, figure, bounded) in enumerate(rows):
            found = attack(root / f"attack{i}", policy, figure, args.probes, args.notes, seed=i)
            if bounded:
                eps, tight, loose = one_model_bounds(policy)
                allowed = f"{tight:.3f} (Gaussian); {loose:.3f} (eps {eps:.2f})"
            else:
                allowed = "no guarantee"
            print(
                f"| {name} | {found['calibration']} | {found['answered']} | "
                f"{found['tpr']:.3f} | {found['fpr']:.3f} | "
                f"{found['adv']:.3f} ± {found['ci']:.3f} | {allowed} |"
            )
        if not args.trials:
            return
        found = utility(root / "utility", args.notes, args.trials)
        print(f"\nutility: 24 models x {args.trials} trials on a {args.notes}-note split")
        exact = ", ".join(f"{kind} {value:.3f}" for kind, value in found["exact"].items())
        print(f"exact note-averaged token F1: {exact}; noise sd {found['sd']:.4f}")
        print("| better | worse | exact gap | pairs in the right order |")
        print("|---|---|---|---|")
        for (better, worse), (share, n) in found["ordered"].items():
            gap = found["exact"][better] - found["exact"][worse]
            print(f"| {better} | {worse} | {gap:.3f} | {share:.4f} of {n} |")


if __name__ == "__main__":
    main()
