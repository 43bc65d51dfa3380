"""The mix of notes with and without identifiers (seed 002 ablation: more no-PII notes
raise precision-driven F1 but cost recall on rare labels)."""

from __future__ import annotations

from collections.abc import Sequence

from protocol import Document


def pii_mix(notes: Sequence[Document], fraction: float | None) -> list[Document]:
    """The most notes (in order) whose share with at least one span is ``fraction``; all of
    them when ``fraction`` is None."""
    if fraction is None:
        return list(notes)
    with_pii = [d for d in notes if d.spans]
    without = [d for d in notes if not d.spans]
    if fraction == 1.0:
        keep_pii, keep_plain = len(with_pii), 0
    elif fraction == 0.0:
        keep_pii, keep_plain = 0, len(without)
    else:
        # as many of each as the scarcer side allows: pii / (pii + plain) = fraction
        total = min(len(with_pii) / fraction, len(without) / (1 - fraction))
        keep_pii = min(len(with_pii), round(total * fraction))
        keep_plain = min(len(without), round(total * (1 - fraction)))
    chosen = {id(d) for d in with_pii[:keep_pii]} | {id(d) for d in without[:keep_plain]}
    return [d for d in notes if id(d) in chosen]
