"""Slow, obviously correct definitions of the audit's measures, on Python strings and sets.

The fast measures are tested against these on random small corpora, and the scale benchmark
times :func:`naive_max_rouge` (every real/synthetic pair) to show what the fast path saves.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from protocol import Document, Span
from site_agent.privacy.tokens import is_word_char, lower_keep_length


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every word, by the same character rule as the fast tokenizer."""
    lowered = lower_keep_length(text)
    out, start = [], None
    for index, char in enumerate([*lowered, " "]):
        if index < len(lowered) and is_word_char(char):
            start = index if start is None else start
        elif start is not None:
            out.append((lowered[start:index], start, index))
            start = None
    return out


def words(text: str) -> list[str]:
    return [w for w, _, _ in word_spans(text)]


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def real_ngram_sets(
    real: Sequence[Document], n: int
) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """R (all unique n-grams) and R* (those with a word overlapping a gold span)."""
    everything: set[tuple[str, ...]] = set()
    sensitive: set[tuple[str, ...]] = set()
    for doc in real:
        spans = word_spans(doc.text)
        for i in range(len(spans) - n + 1):
            window = spans[i : i + n]
            gram = tuple(w for w, _, _ in window)
            everything.add(gram)
            if any(ws < s.end and s.start < we for _, ws, we in window for s in doc.spans):
                sensitive.add(gram)
    return everything, sensitive


def identifying_ngrams(
    real: Sequence[Document],
    n: int,
    min_share: float,
    tokens_of: Callable[[str], list[tuple[str, int, int]]] = word_spans,
    specific: Callable[[Document, Span], bool] | None = None,
) -> set[tuple[str, ...]]:
    """n-grams that hold at least ``min_share`` (> 0) of one gold span's characters in some
    real occurrence. A token counts towards the last span starting before its end, with the
    characters it shares with it; a span's whole is what all its tokens hold. With
    ``specific``, that share of one span it calls specific, or of two spans at once."""
    found: set[tuple[str, ...]] = set()
    for doc in real:
        tokens = tokens_of(doc.text)
        owner: list[tuple[int, int]] = []  # (span index or -1, characters held)
        for _, start, end in tokens:
            before = [k for k, s in enumerate(doc.spans) if s.start < end]
            k = before[-1] if before else -1
            held = min(end, doc.spans[k].end) - max(start, doc.spans[k].start) if k >= 0 else 0
            owner.append((k, held) if held > 0 else (-1, 0))
        whole = Counter()  # type: Counter[int]
        for k, held in owner:
            if k >= 0:
                whole[k] += held
        for i in range(len(tokens) - n + 1):
            window = Counter()  # type: Counter[int]
            for k, held in owner[i : i + n]:
                if k >= 0:
                    window[k] += held
            big = [k for k, held in window.items() if held / whole[k] >= min_share]
            if specific is None:
                counts = bool(big)
            else:
                counts = len(big) >= 2 or any(specific(doc, doc.spans[k]) for k in big)
            if counts:
                found.add(tuple(w for w, _, _ in tokens[i : i + n]))
    return found


def corpus_recall(
    real: Sequence[Document], synthetic: Sequence[Document], n: int
) -> tuple[float, float]:
    """(|R ∩ S| / |R|, |R* ∩ S| / |R*|), 0 where the denominator is empty."""
    everything, sensitive = real_ngram_sets(real, n)
    synth = {g for doc in synthetic for g in ngrams(words(doc.text), n)}
    recall = len(everything & synth) / len(everything) if everything else 0.0
    sensitive_recall = len(sensitive & synth) / len(sensitive) if sensitive else 0.0
    return recall, sensitive_recall


def rouge_n_recall(real_text: str, synthetic_text: str, n: int) -> float:
    reference = Counter(ngrams(words(real_text), n))
    candidate = Counter(ngrams(words(synthetic_text), n))
    total = sum(reference.values())
    if not total:
        return 0.0
    return sum(min(count, candidate[g]) for g, count in reference.items()) / total


def naive_max_rouge(real: Sequence[Document], synthetic: Sequence[Document], n: int) -> list[float]:
    """max over every real document of ROUGE-N recall, per synthetic document (all pairs)."""
    return [max((rouge_n_recall(r.text, s.text, n) for r in real), default=0.0) for s in synthetic]


def jaccard(a_text: str, b_text: str, shingle: int) -> float:
    a, b = set(ngrams(words(a_text), shingle)), set(ngrams(words(b_text), shingle))
    return len(a & b) / len(a | b) if a | b else 0.0


def surface_matches(surfaces: Sequence[str], texts: Sequence[str]) -> list[tuple[int, int]]:
    """(text, surface) for every whole-word occurrence: one regular expression per surface
    over each text's words joined by single spaces, matched at every start; a repeated word
    sequence reports its first surface."""
    spaced = [" ".join(words(text)) for text in texts]
    seen: set[str] = set()
    found: list[tuple[int, int]] = []
    for index, surface in enumerate(surfaces):
        key = " ".join(words(surface))
        if not key or key in seen:
            continue
        seen.add(key)
        pattern = re.compile(rf"(?<!\S)(?={re.escape(key)}(?!\S))")
        for doc, text in enumerate(spaced):
            found.extend((doc, index) for _ in pattern.finditer(text))
    return found
