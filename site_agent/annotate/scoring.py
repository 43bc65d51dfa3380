"""Validation scores of an annotator on IOB2 word tags.

Interim scorer until ``shared/metrics`` (the metrics engineer's token/span metrics) is merged:
token-level micro scores over words (one unit per word, label must match, ``O`` excluded) and
seqeval's entity-level scores on the same tag sequences.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from protocol import Corpus, Span
from protocol.annotator import AnnotatorMetrics
from shared.ner_tokens import OUTSIDE, split_words, word_tags


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
    )


def _overlap_matches(gold: Sequence[Span], pred: Sequence[Span]) -> int:
    """One-to-one, label-consistent matches, greedily by largest intersection."""
    pairs = sorted(
        (
            (min(g.end, p.end) - max(g.start, p.start), i, j)
            for i, g in enumerate(gold)
            for j, p in enumerate(pred)
            if g.label == p.label and g.start < p.end and p.start < g.end
        ),
        reverse=True,
    )
    used_gold: set[int] = set()
    used_pred: set[int] = set()
    for _, i, j in pairs:
        if i not in used_gold and j not in used_pred:
            used_gold.add(i)
            used_pred.add(j)
    return len(used_gold)


def _f1(tp: int, predicted: int, gold: int) -> float:
    return _ratio(2 * tp, predicted + gold)


def corpus_scores(gold: Corpus, pred: Corpus) -> dict[str, float]:
    """Interim test scores (until shared/metrics is merged): seqeval F1 on word tags, span
    exact/overlap micro F1, and document leakage (share of documents with a missed span)."""
    predicted = pred.by_id()
    gold_tags, pred_tags = [], []
    exact = overlap = n_gold = n_pred = leaked = 0
    for doc in gold.documents:
        spans = predicted[doc.id].spans
        words = split_words(doc.text)
        gold_tags.append(word_tags(words, doc.spans))
        pred_tags.append(word_tags(words, spans))
        exact += len({(s.start, s.end, s.label) for s in doc.spans} & set(
            (s.start, s.end, s.label) for s in spans))  # fmt: skip
        matched = _overlap_matches(doc.spans, spans)
        overlap += matched
        leaked += matched < len(doc.spans)
        n_gold, n_pred = n_gold + len(doc.spans), n_pred + len(spans)
    return {
        "test_token_f1": score_tags(gold_tags, pred_tags).entity_f1,
        "exact_f1": _f1(exact, n_pred, n_gold),
        "overlap_f1": _f1(overlap, n_pred, n_gold),
        "doc_leakage": _ratio(leaked, len(gold.documents)),
    }
