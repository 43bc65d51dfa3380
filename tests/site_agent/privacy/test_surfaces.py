"""The Aho-Corasick surface matcher equals a slow regular expression per surface."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Document
from site_agent.privacy.reference import surface_matches
from site_agent.privacy.surfaces import SurfaceMatcher, surface_keys

PIECES = st.sampled_from(
    [
        *("Ana", "RUIZ", "ruiz", "de", "la", "70", "Núñez", "x", "-", ", ", "  ", ".", "\n"),
        # decomposed accents (marks are word characters), a capital whose lower case is
        # longer, an astral letter, an emoji (not a word character), an underscore, CJK
        *("Nu\u0301n\u0303ez", "İ", "𝐀b", "😀", "_", "東京"),
    ]
)
TEXT = st.lists(PIECES, max_size=14).map(" ".join)


def _docs(texts: list[str]) -> list[Document]:
    return [Document(id=f"d{i}", text=t) for i, t in enumerate(texts)]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(TEXT, min_size=1, max_size=6),
    st.lists(TEXT, min_size=1, max_size=5),
    st.integers(1, 40),
)
def test_matches_equal_slow_reference(surfaces: list[str], texts: list[str], chunk: int) -> None:
    docs, found = SurfaceMatcher.build(surfaces).match(_docs(texts), chunk_chars=chunk)
    ours = Counter(zip(docs.tolist(), found.tolist(), strict=True))
    assert ours == Counter(surface_matches(surfaces, texts))


def test_whole_words_only_and_every_occurrence() -> None:
    matcher = SurfaceMatcher.build(["Ana Ruiz", "ruiz"])
    docs, found = matcher.match(_docs(["ANA  ruiz y Ruiz; ruiz-Ana ruizz", "Anatomía ruizz"]))
    assert sorted(zip(docs.tolist(), found.tolist(), strict=True)) == [
        (0, 0),
        (0, 1),
        (0, 1),
        (0, 1),
    ]


def test_keys_are_spaced_lower_case_words() -> None:
    assert surface_keys(["ANA  Ruiz, de la 70.", "...", ""]) == [" ana ruiz de la 70 ", " ", " "]
    assert surface_keys([]) == []
