"""Validation scores of an annotator on IOB2 word tags.

Cheap per-epoch scores on the tags of the first sub-token of each word, with no decoding:
token-level micro scores over words (one unit per word, label must match, ``O`` excluded) and
seqeval's entity-level scores on the same tag sequences. Span-level scores come from
``shared.metrics`` (see ``validate.py``).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence

from protocol.annotator import AnnotatorMetrics, LabelScore
from shared.ner_tokens import OUTSIDE


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def token_scores(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]
) -> tuple[float, float, float, int]:
    """Micro precision, recall, F1 and support over words whose gold or predicted tag is not O.

    B-/I- prefixes are ignored: a word counts as correct when its entity label matches.
    """
    tp = fp = fn = 0
    for gold_seq, pred_seq in zip(gold, pred, strict=True):
        for g, p in zip(gold_seq, pred_seq, strict=True):
            g_label, p_label = g[2:] if g != OUTSIDE else "", p[2:] if p != OUTSIDE else ""
            if g_label and g_label == p_label:
                tp += 1
                continue
            fp += bool(p_label)
            fn += bool(g_label)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return precision, recall, _ratio(2 * precision * recall, precision + recall), tp + fn


def label_scores(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]
) -> dict[str, LabelScore]:
    """Per entity label: gold words, of them found with the right label, and words predicted."""
    support: Counter[str] = Counter()
    found: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    for gold_seq, pred_seq in zip(gold, pred, strict=True):
        for g, p in zip(gold_seq, pred_seq, strict=True):
            g_label, p_label = g[2:] if g != OUTSIDE else "", p[2:] if p != OUTSIDE else ""
            support[g_label] += 1
            predicted[p_label] += 1
            found[g_label] += bool(g_label) and g_label == p_label
    labels = sorted((set(support) | set(predicted)) - {""})
    return {
        label: LabelScore(support=support[label], found=found[label], predicted=predicted[label])
        for label in labels
    }


def prefix_confusion(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]
) -> dict[str, dict[str, int]]:
    """Words counted by gold IOB2 prefix, then predicted prefix (``B``, ``I``, ``O``)."""
    counts = {g: dict.fromkeys("BIO", 0) for g in "BIO"}
    for gold_seq, pred_seq in zip(gold, pred, strict=True):
        for g, p in zip(gold_seq, pred_seq, strict=True):
            counts[g[0]][p[0]] += 1
    return counts


def score_tags(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> AnnotatorMetrics:
    """Token-level and seqeval entity-level scores of predicted against gold word tags."""
    from seqeval.metrics import f1_score, precision_score, recall_score

    precision, recall, f1, support = token_scores(gold, pred)
    g, p = [list(s) for s in gold], [list(s) for s in pred]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns when a class has no gold/predicted entity
        entity = (
            float(precision_score(g, p, zero_division=0)),
            float(recall_score(g, p, zero_division=0)),
            float(f1_score(g, p, zero_division=0)),
        )
    return AnnotatorMetrics(
        precision=precision,
        recall=recall,
        f1=f1,
        entity_precision=entity[0],
        entity_recall=entity[1],
        entity_f1=entity[2],
        support=int(support),
        labels=label_scores(gold, pred),
        confusion=prefix_confusion(gold, pred),
    )
