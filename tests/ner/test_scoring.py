"""Per-epoch word-tag scores against hand-worked examples and seqeval."""

from __future__ import annotations

import pytest
from seqeval.metrics import f1_score

from ner.scoring import score_tags, token_scores

GOLD = [["B-NAME", "I-NAME", "O", "B-DATE"], ["O", "B-ID"]]
PRED = [["B-NAME", "O", "O", "B-LOC"], ["B-ID", "B-ID"]]


def test_token_scores_by_hand() -> None:
    # words: NAME ok, NAME missed, DATE->LOC (fp+fn), O->ID (fp), ID ok
    precision, recall, f1, support = token_scores(GOLD, PRED)
    assert (precision, recall, support) == (pytest.approx(2 / 4), pytest.approx(2 / 4), 4)
    assert f1 == pytest.approx(0.5)


def test_entity_scores_match_seqeval() -> None:
    assert score_tags(GOLD, PRED).entity_f1 == pytest.approx(f1_score(GOLD, PRED))
