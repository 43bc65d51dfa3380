"""The audit's measures equal slow, obviously correct references on random small corpora."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Corpus
from site_agent.audit.ngram_recall import recall_figures
from site_agent.audit.policy import AuditPolicy, FilterSettings
from site_agent.privacy import reference
from site_agent.privacy.grams import build_gram_table
from site_agent.privacy.tokens import word_stream
from tests.site_agent.audit.builders import measured
from tests.site_agent.privacy.strategies import CORPORA


@settings(max_examples=80, deadline=None, derandomize=True)
@given(CORPORA, st.sampled_from([1, 2, 3, 5, 10]))
def test_ngram_recall_equals_set_reference(corpora: tuple, n: int) -> None:
    real, synth = corpora
    table = build_gram_table(word_stream(real, with_pii=True), word_stream(synth), n)
    kept = np.ones(len(synth), dtype=bool)
    got = recall_figures(table, table.synth_hits(kept))
    assert (got["recall"], got["sensitive_recall"]) == reference.corpus_recall(real, synth, n)
    kept[0] = False
    got = recall_figures(table, table.synth_hits(kept))
    expected = reference.corpus_recall(real, synth[1:], n)
    assert (got["recall"], got["sensitive_recall"]) == expected


@settings(max_examples=40, deadline=None, derandomize=True)
@given(CORPORA, st.sampled_from([0.0, 0.3, 0.6]))
def test_max_rouge_equals_all_pairs_reference_above_threshold(corpora: tuple, t: float) -> None:
    real, synth = corpora
    policy = AuditPolicy(filters=FilterSettings(rouge_n=3, rouge_threshold=t))
    result = measured(
        Corpus(documents=tuple(real)), Corpus(documents=tuple(synth)), "nearest_real", policy
    )
    naive = np.array(reference.naive_max_rouge(real, synth, 3))
    fast = result.max_rouge(3)
    assert np.allclose(fast[naive > t], naive[naive > t])
    assert np.all(fast <= naive + 1e-12)
    assert np.array_equal(fast > t, naive > t)
