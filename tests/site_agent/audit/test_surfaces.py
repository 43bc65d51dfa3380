"""Surface matching by word-sequence hashes equals an Aho-Corasick automaton over the words."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from site_agent.audit.reference import aho_corasick_matches
from site_agent.audit.surfaces import SurfaceIndex
from site_agent.audit.tokens import text_stream

PIECES = st.sampled_from(
    ["Ana", "RUIZ", "ruiz", "de", "la", "70", "Núñez", "x", "-", ", ", "  ", "."]
)
TEXT = st.lists(PIECES, max_size=14).map(" ".join)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(TEXT, min_size=1, max_size=6), st.lists(TEXT, min_size=1, max_size=5))
def test_matches_equal_aho_corasick(surfaces: list[str], texts: list[str]) -> None:
    docs, found = SurfaceIndex.build(surfaces).match(text_stream(texts))
    ours = Counter(zip(docs.tolist(), found.tolist(), strict=True))
    assert ours == Counter(aho_corasick_matches(surfaces, texts))


def test_whole_words_only_and_every_occurrence() -> None:
    index = SurfaceIndex.build(["Ana Ruiz", "ruiz"])
    docs, found = index.match(text_stream(["ANA  ruiz y Ruiz; ruiz-Ana ruizz", "Anatomía ruizz"]))
    assert sorted(zip(docs.tolist(), found.tolist(), strict=True)) == [
        (0, 0),
        (0, 1),
        (0, 1),
        (0, 1),
    ]
