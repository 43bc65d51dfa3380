"""The engine's fast paths equal slow, obviously correct references on random small corpora."""

from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from protocol import Document
from site_agent.audit.policy import FilterSettings
from site_agent.privacy import reference
from site_agent.privacy.bm25 import bm25_scores, build_bm25, nearest_real
from site_agent.privacy.grams import build_gram_table, real_grams
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.privacy.rouge import prefix_matrix, rouge_candidates, rouge_recall
from site_agent.privacy.tokens import word_stream
from tests.site_agent.privacy.strategies import CORPORA, named_documents


@settings(max_examples=60, deadline=None, derandomize=True)
@given(CORPORA, st.sampled_from([(2, 3), (3, 5), (3, 10), (2, 7)]))
def test_lookup_restricted_by_shorter_ngrams_finds_the_same_hits(
    corpora: tuple, sizes: tuple
) -> None:
    real, synth = corpora
    small, n = sizes
    real_stream, synth_stream = word_stream(real, with_pii=True), word_stream(synth)
    base = build_gram_table(real_stream, synth_stream, small)
    fast = build_gram_table(real_stream, synth_stream, n, base)
    full = build_gram_table(real_stream, synth_stream, n)
    assert sorted(zip(fast.synth_docs.tolist(), fast.synth_cols.tolist(), strict=True)) == sorted(
        zip(full.synth_docs.tolist(), full.synth_cols.tolist(), strict=True)
    )


@settings(max_examples=60, deadline=None, derandomize=True)
@given(CORPORA, st.sampled_from([1, 3, 5]), st.sampled_from([0.0, 0.2, 0.5, 0.8]))
def test_rouge_is_exact_and_candidates_miss_nothing(corpora: tuple, n: int, t: float) -> None:
    real, synth = corpora
    table = build_gram_table(word_stream(real), word_stream(synth), n)
    s = np.repeat(np.arange(len(synth)), len(real))
    r = np.tile(np.arange(len(real)), len(synth))
    expected = [
        reference.rouge_n_recall(real[j].text, synth[i].text, n) for i, j in zip(s, r, strict=True)
    ]
    assert np.allclose(rouge_recall(table, s, r), expected)
    cand_s, cand_r = rouge_candidates(table, t)
    candidates = set(zip(cand_s.tolist(), cand_r.tolist(), strict=True))
    above = {(int(i), int(j)) for i, j, v in zip(s, r, expected, strict=True) if v > t}
    assert above <= candidates


@settings(max_examples=40, deadline=None, derandomize=True)
@given(CORPORA, st.sampled_from([1, 3, 5]), st.sampled_from([0.0, 0.3, 0.7]), st.integers(1, 9))
def test_prefixes_do_not_depend_on_the_runs_of_documents_they_are_built_from(
    corpora: tuple, n: int, t: float, slice_size: int
) -> None:
    real, _ = corpora
    grams = real_grams(word_stream(real), n)
    whole = prefix_matrix(grams, t, slice_size=10**9)
    runs = prefix_matrix(grams, t, slice_size=slice_size)
    assert (whole != runs).nnz == 0 and whole.shape == runs.shape


@settings(max_examples=40, deadline=None, derandomize=True)
@given(CORPORA)
def test_bm25_scores_equal_bm25s(corpora: tuple) -> None:
    real, synth = corpora
    assume(any(reference.words(d.text) for d in real))  # bm25s cannot index an empty corpus
    index = build_bm25(word_stream(real), k1=1.2, b=0.75)
    ours = bm25_scores(index, word_stream(synth))
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index([reference.words(d.text) for d in real], show_progress=False)
    for i, doc in enumerate(synth):
        query = [w for w in reference.words(doc.text) if w in retriever.vocab_dict]
        expected = retriever.get_scores(query) if query else np.zeros(len(real))
        assert np.allclose(ours[i], expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(CORPORA, st.integers(1, 4))
def test_sparse_top_k_equals_dense_sort(corpora: tuple, k: int) -> None:
    real, synth = corpora
    index = build_bm25(word_stream(real))
    dense = bm25_scores(index, word_stream(synth))
    ids, scores = nearest_real(index, word_stream(synth), k, batch=2)
    for i, row in enumerate(dense):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))[: min(k, len(row))]
        expected = [j if row[j] > 0 else -1 for j in order]
        assert ids[i].tolist() == expected
        assert np.allclose(scores[i], [max(row[j], 0) for j in order], rtol=1e-6)


def test_nearest_real_ranks_the_copied_document_first() -> None:
    real = [
        Document(id="r0", text="dolor torácico opresivo irradiado al brazo izquierdo"),
        Document(id="r1", text="fiebre tos productiva y disnea de esfuerzo"),
        Document(id="r2", text="cefalea intensa con fotofobia y rigidez de nuca"),
    ]
    synth = [Document(id="s0", text="paciente con fiebre y tos productiva y disnea")]
    ids, scores = nearest_real(build_bm25(word_stream(real)), word_stream(synth), k=2)
    assert ids[0, 0] == 1
    assert scores[0, 0] > scores[0, 1] >= 0


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    named_documents("r", labels=("NOMBRE", "FECHAS")),
    named_documents("s"),
    st.sampled_from([1, 2, 3, 5]),
    st.sampled_from([0.2, 0.5, 0.75, 1.0]),
)
def test_identifying_ngrams_of_specific_identifiers_equal_the_reference(
    real: list[Document], others: list[Document], n: int, share: float
) -> None:
    """The default rule: the share of one specific identifier (a name of two capitalised
    words; never a date), or of two identifiers at once."""
    from site_agent.audit.ngram_recall import docs_with_sensitive_ngrams
    from site_agent.privacy.grams import identifying_columns
    from site_agent.privacy.specific import is_specific, span_specificity

    synth = [*others, *(Document(id=f"c{d.id}", text=d.text) for d in real)]
    stream = word_stream(real, with_pii=True)
    table = build_gram_table(stream, word_stream(synth), n)
    chosen = identifying_columns(table, stream, share, span_specificity(real))
    flagged = docs_with_sensitive_ngrams(table, chosen)
    wanted = reference.identifying_ngrams(
        real, n, share, specific=lambda doc, span: is_specific(doc.surface(span), span.label)
    )
    expected = [bool(wanted & set(reference.ngrams(reference.words(d.text), n))) for d in synth]
    assert flagged.tolist() == expected
    assert set(np.flatnonzero(chosen)) <= set(
        np.flatnonzero(identifying_columns(table, stream, share))
    )
    filters = FilterSettings(sensitive_ngram_n=n, sensitive_ngram_min_share=share)
    assert filters.sensitive_ngram_identifiers == "specific"  # the default
    assert (IdentifyingIndex.build(real, filters).hits(synth) > 0).tolist() == expected


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    named_documents("r"),
    named_documents("s"),
    st.sampled_from([1, 2, 3, 5]),
    st.sampled_from([0.0, 0.2, 0.5, 0.75, 1.0]),
)
def test_identifying_ngrams_equal_the_span_share_reference(
    real: list[Document], others: list[Document], n: int, share: float
) -> None:
    from site_agent.audit.ngram_recall import docs_with_sensitive_ngrams
    from site_agent.privacy.grams import identifying_columns

    # the synthetic side copies every real note's words too, so every real n-gram is looked up
    synth = [*others, *(Document(id=f"c{d.id}", text=d.text) for d in real)]
    stream = word_stream(real, with_pii=True)
    table = build_gram_table(stream, word_stream(synth), n)
    flagged = docs_with_sensitive_ngrams(table, identifying_columns(table, stream, share))
    if share > 0:
        wanted = reference.identifying_ngrams(real, n, share)
    else:
        wanted = reference.real_ngram_sets(real, n)[1]
    expected = [bool(wanted & set(reference.ngrams(reference.words(d.text), n))) for d in synth]
    assert flagged.tolist() == expected
    # the index the template filler checks its notes against flags the same notes
    filters = FilterSettings(
        sensitive_ngram_n=n, sensitive_ngram_min_share=share, sensitive_ngram_identifiers="all"
    )
    assert (IdentifyingIndex.build(real, filters).hits(synth) > 0).tolist() == expected
