"""The interim annotator scores against hand-worked examples and seqeval."""

from __future__ import annotations

import pytest
from seqeval.metrics import f1_score

from protocol import Corpus, Document, Span
from site_agent.annotate.scoring import corpus_scores, score_tags, token_scores

GOLD = [["B-NAME", "I-NAME", "O", "B-DATE"], ["O", "B-ID"]]
PRED = [["B-NAME", "O", "O", "B-LOC"], ["B-ID", "B-ID"]]


def test_token_scores_by_hand() -> None:
    # words: NAME ok, NAME missed, DATE->LOC (fp+fn), O->ID (fp), ID ok
    precision, recall, f1, support = token_scores(GOLD, PRED)
    assert (precision, recall, support) == (pytest.approx(2 / 4), pytest.approx(2 / 4), 4)
    assert f1 == pytest.approx(0.5)


def test_entity_scores_match_seqeval() -> None:
    assert score_tags(GOLD, PRED).entity_f1 == pytest.approx(f1_score(GOLD, PRED))


def test_corpus_scores_by_hand() -> None:
    text = "Ana Gil vino el 3 de mayo ."
    gold = Document(
        id="a", text=text,
        spans=(Span(start=0, end=7, label="NAME"), Span(start=16, end=24, label="DATE")),
    )  # fmt: skip
    clean = Document(id="b", text="sin datos", spans=())
    pred_a = gold.model_copy(
        update={"spans": (Span(start=0, end=3, label="NAME"), Span(start=16, end=24, label="ID"))}
    )
    scores = corpus_scores(
        Corpus(documents=(gold, clean)),
        Corpus(documents=(pred_a, clean), labels=("DATE", "ID", "NAME")),
    )
    assert scores["exact_f1"] == 0.0
    assert scores["overlap_f1"] == pytest.approx(2 * 1 / (2 + 2))  # NAME overlaps, DATE mislabelled
    assert scores["doc_leakage"] == pytest.approx(1 / 2)
