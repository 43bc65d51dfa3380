"""The English sparse-PHI corpus of issue 29: under 1% PHI words, most notes without PHI, and
every span still on the identifier it labelled in the demo note it came from."""

from __future__ import annotations

from benchmarks.sparse_corpus import all_words, english_sparse, phi_words, with_label_case


def test_english_sparse_corpus_is_sparse_and_its_spans_are_exact() -> None:
    corpus = english_sparse(200, seed=3)
    docs = list(corpus.documents)
    assert len(docs) == 200 and len({d.id for d in docs}) == 200
    without = sum(not d.spans for d in docs) / len(docs)
    assert 0.65 <= without <= 0.85
    assert 0 < phi_words(docs) / all_words(docs) < 0.01
    surfaces = [d.surface(s) for d in docs for s in d.spans]
    assert surfaces and all(s == s.strip() and s for s in surfaces)
    dates = [d.surface(s) for d in docs for s in d.spans if s.label == "DATE"]
    assert all(any(c.isdigit() for c in date) for date in dates)
    assert english_sparse(200, seed=3).documents == corpus.documents  # seeded


def test_label_case_rewrites_only_the_labels() -> None:
    corpus = english_sparse(60, seed=3)
    mixed = with_label_case(corpus, "mixed")
    assert (
        set(corpus.labels) >= {"DATE", "PER"} and "Date" in mixed.labels and "Per" in mixed.labels
    )
    for before, after in zip(corpus.documents, mixed.documents, strict=True):
        assert before.text == after.text
        assert [(s.start, s.end, s.label.upper()) for s in before.spans] == [
            (s.start, s.end, s.label.upper()) for s in after.spans
        ]
    assert with_label_case(mixed, "upper").documents == corpus.documents
