"""The figures a site returns under ``mechanism = "gaussian"``: note-averaged, with noise.

Each figure is a mean over the test split's notes of a per-note figure within [0, 1]:

- token F1 and span-overlap F1 of the note (``2 tp / (predicted + gold)``; a note with nothing
  to find and nothing tagged scores 1);
- document leakage: 1 when the note has a gold mention the model missed, else 0.

Changing one note in any way (its words, its mentions, a name in it) changes each mean by at
most ``1 / n_notes``, whatever the model does with that note, so that is the sensitivity the
Gaussian noise is calibrated to (``EvaluationPolicy.noise_sd``). The noise comes from the
operating system's entropy, never from the coordinator's seed; rounding to ``grid`` and
clipping to [0, 1] happen afterwards, as presentation. With ``intervals`` on, low and high are
the value -/+ 1.96 noise standard deviations (what the noise alone could move it by; no
bootstrap over notes, which would cost budget).
"""

from __future__ import annotations

import numpy as np

from protocol import Corpus
from protocol.rounds import Estimate, ModelMetrics
from shared.metrics import document_counts
from site_agent.federation.policy import EvaluationPolicy

Z95 = 1.959964


def note_f1(tp: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Each note's F1 (1 where the note has nothing to find and nothing was tagged)."""
    denominator = predicted + gold
    return np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 1.0)


def note_averaged(gold: Corpus, predicted: Corpus) -> dict[str, float]:
    """The three exact note-averaged figures (before noise)."""
    counts = document_counts(gold, predicted)
    token = note_f1(counts["token.tp"], counts["token.pred"], counts["token.gold"])
    overlap = note_f1(counts["overlap.tp"], counts["overlap.pred"], counts["overlap.gold"])
    return {
        "token_f1": float(token.mean()),
        "span_overlap_f1": float(overlap.mean()),
        "document_leakage": float(counts["leaked"].mean()),
    }


def _presented(value: float, grid: float) -> float:
    clipped = min(1.0, max(0.0, value))
    return min(1.0, max(0.0, round(round(clipped / grid) * grid, 10))) if grid > 0 else clipped


def noisy_metrics(
    gold: Corpus,
    predicted: Corpus,
    policy: EvaluationPolicy,
    rng: np.random.Generator | None = None,
) -> ModelMetrics:
    """The released figures of ``predicted`` on ``gold``: exact note-averaged figures plus
    Gaussian noise of ``policy.noise_sd(len(gold))``, then rounded (presentation)."""
    rng = rng or np.random.default_rng()  # fresh OS entropy for every release
    sd = policy.noise_sd(len(gold))
    exact = note_averaged(gold, predicted)
    noisy = {name: value + float(rng.normal(0.0, sd)) for name, value in exact.items()}

    def estimate(value: float) -> Estimate:
        shown = _presented(value, policy.grid)
        if not policy.intervals:
            return Estimate(value=shown, low=shown, high=shown)
        low = min(shown, _presented(value - Z95 * sd, policy.grid))
        high = max(shown, _presented(value + Z95 * sd, policy.grid))
        return Estimate(value=shown, low=low, high=high)

    return ModelMetrics(
        token_f1=estimate(noisy["token_f1"]),
        span_overlap_f1=estimate(noisy["span_overlap_f1"]),
        document_leakage=estimate(noisy["document_leakage"]),
        label_recall={},
        n_documents=len(gold),
    )
