"""Which identifiers an annotator misses: recall and leaked documents per label, and the
shapes of the identifiers one annotator misses that another catches.

A gold span is *caught* when the label-consistent greedy overlap matching of
:mod:`shared.metrics.spans` pairs it with a prediction, and *missed* otherwise: the same
criterion as document leakage (:mod:`shared.metrics.leakage`), so a label's leaked documents
are the documents its misses make leak. Only counts, labels and shapes come out; never a
surface.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from protocol import Corpus
from protocol.evaluation import LabelRecall, MissedShape
from shared.metrics.pairing import DocumentPair, evaluation_labels, pair_documents
from shared.metrics.scores import ratio
from shared.metrics.shapes import NoteLayout, shape_key, sorted_counts
from shared.metrics.spans import count_spans, greedy_overlap_matching

MAX_MISSED_SHAPE_ROWS = 50


def caught_spans(pair: DocumentPair) -> set[int]:
    """Indices of the gold spans of ``pair`` that the overlap matching pairs with a prediction."""
    return {i for i, _ in greedy_overlap_matching(pair.gold.spans, pair.predicted)}


def label_recall(gold: Corpus, pred: Corpus) -> dict[str, LabelRecall]:
    """Support, overlap-matched recall and leaked documents of every gold label of ``gold``."""
    pairs = pair_documents(gold, pred)
    counts = count_spans(pairs, evaluation_labels(pairs))
    out: dict[str, LabelRecall] = {}
    for k, label in enumerate(counts.labels):
        support = int(counts.gold[:, k].sum())
        if support:
            missed = counts.gold[:, k] - counts.overlap[:, k]
            out[label] = LabelRecall(
                support=support,
                recall=ratio(int(counts.overlap[:, k].sum()), support),
                leaked_documents=int((missed > 0).sum()),
            )
    return out


def _missed_but_caught(
    pairs: Sequence[DocumentPair], reference: Sequence[DocumentPair]
) -> Counter[tuple[str, ...]]:
    found: Counter[tuple[str, ...]] = Counter()
    for pair, ref in zip(pairs, reference, strict=True):
        gold = pair.gold
        missed = set(range(len(gold.spans))) - caught_spans(pair)
        wanted = sorted(missed & caught_spans(ref))
        if not wanted:
            continue
        layout = NoteLayout.of(gold.text)
        for i in wanted:
            span = gold.spans[i]
            found[(span.label, *shape_key(gold.text, span.start, span.end, layout))] += 1
    return found


def missed_shapes(
    gold: Corpus, pred: Corpus, reference: Corpus, max_rows: int = MAX_MISSED_SHAPE_ROWS
) -> tuple[tuple[MissedShape, ...], int]:
    """Shapes of the gold identifiers ``pred`` misses and ``reference`` catches, most frequent
    first (at most ``max_rows`` rows), and how many such identifiers the cut left out."""
    found = _missed_but_caught(pair_documents(gold, pred), pair_documents(gold, reference))
    ranked = sorted_counts(found.items())
    rows = tuple(
        MissedShape(
            label=label, shape=shape, casing=case, length=length, position=where, count=count
        )
        for (label, shape, case, length, where), count in ranked[:max_rows]
    )
    return rows, sum(count for _, count in ranked[max_rows:])
