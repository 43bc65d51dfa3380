"""From per-word tag scores to a tag sequence: arg-max, or the best well-formed IOB2 path.

Arg-max picks each word's tag on its own, so an undertrained model can write ``I-CALLE`` right
after ``B-TERRITORIO`` and split one place name into two entities of different labels, or
open an entity with ``I-X``. ``viterbi`` picks the sequence with the highest total log
probability among the sequences that are valid IOB2 (``I-X`` only after ``B-X`` or ``I-X``,
never first in a chunk; chunks never cut a span). It needs no training, adds no parameters,
and costs a few milliseconds per chunk. Tags without a ``B-``/``I-`` prefix (a foreign IO-tagged
model) are unconstrained, so for such models both decoders agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Decoder = Callable[[np.ndarray, Sequence[str]], list[int]]
"""``decoder(log_probs, tags)``: ``log_probs`` has one row per word, one column per tag."""


def iob2_constraints(tags: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(may_start, may_follow)``: which tags may open a chunk, and ``[previous, next]`` pairs."""
    count = len(tags)
    may_start = np.ones(count, dtype=bool)
    may_follow = np.ones((count, count), dtype=bool)
    for index, tag in enumerate(tags):
        if not tag.startswith("I-"):
            continue
        label = tag[2:]
        may_start[index] = False
        may_follow[:, index] = [t in (f"B-{label}", f"I-{label}") for t in tags]
    return may_start, may_follow


def argmax_decode(log_probs: np.ndarray, tags: Sequence[str]) -> list[int]:
    """Each word's most probable tag."""
    return [int(i) for i in log_probs.argmax(axis=-1)]


def viterbi_decode(log_probs: np.ndarray, tags: Sequence[str]) -> list[int]:
    """The most probable tag sequence that is valid IOB2 (see module docstring)."""
    if len(log_probs) == 0:
        return []
    may_start, may_follow = iob2_constraints(tags)
    forbidden = np.where(may_follow, 0.0, -np.inf)
    score = np.where(may_start, log_probs[0], -np.inf)
    back = np.zeros(log_probs.shape, dtype=np.int64)
    for word in range(1, len(log_probs)):
        candidates = score[:, None] + forbidden
        back[word] = candidates.argmax(axis=0)
        score = candidates.max(axis=0) + log_probs[word]
    path = [int(score.argmax())]
    for word in range(len(log_probs) - 1, 0, -1):
        path.append(int(back[word, path[-1]]))
    return path[::-1]


DECODERS: dict[str, Decoder] = {"argmax": argmax_decode, "viterbi": viterbi_decode}
