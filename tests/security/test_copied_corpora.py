"""Issue 50: copied synthetic corpora, found by their documents and not by their bytes.

Before: duplicates were matched by the corpus file's SHA-256 alone, so a reordered copy passed,
and an exact copy excluded the honest site together with the copier. Now each corpus is a set
of normalised documents with a MinHash sketch (``coordinator/collect/duplicates.py``): the same
documents in any order exclude the later bundle only, and a near-duplicate is flagged.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.collect.duplicates import corpus_minhash, document_keys
from coordinator.collect.phase import collect
from coordinator.deployment.keys import load_registry
from coordinator.run_state import RunState
from protocol import Corpus, Document
from site_agent.client_app import app as client_app
from tests.bundles import forge
from tests.coordinator.state import run_state
from tests.security.hostile import HostileGrid, manifest_of, replace_corpus
from tests.security.test_hostile_site_replies import (  # noqa: F401 (the module's fixture)
    HONEST,
    HOSTILE,
    NODES,
    Sites,
    honest_config,
    signed,
    sites,
)


def honest_documents(s: Sites) -> list[Document]:
    name = next(a["name"] for a in manifest_of(s.honest)["artifacts"]
                if a["kind"] == "synthetic_corpus")  # fmt: skip
    lines = (s.honest / name).read_text(encoding="utf-8").splitlines()
    return [Document.model_validate(json.loads(line)) for line in lines if line.strip()]


def reordered(docs: list[Document]) -> list[Document]:
    """The same notes in reverse order, renamed and re-spaced: not the same bytes."""
    return [d.model_copy(update={"id": f"c{i}", "text": d.text.replace(" ", "  ")})
            for i, d in enumerate(reversed(docs))]  # fmt: skip


def extended(docs: list[Document]) -> list[Document]:
    """The same notes plus two of its own: 4 of 6 documents shared (Jaccard 0.67)."""
    own = [Document(id=f"own{i}", text=f"Nota propia numero {i} sin datos.") for i in range(2)]
    return [*docs, *own]


def _collect(s: Sites, tmp_path: Path, docs: list[Document], created_at: str) -> RunState:
    bundle = Path(shutil.copytree(s.hostile, tmp_path / "bundle"))
    replace_corpus(bundle, Corpus(documents=tuple(docs)), s.hostile_keys.private)
    forge(bundle, lambda m: m.update(created_at=created_at), s.hostile_keys.private)
    grid = HostileGrid(client_app, {1: honest_config(s), 2: {}}, {2: signed(bundle, s)})
    state = run_state(tmp_path, NODES)
    state.registry = load_registry(s.registry)
    collect(grid, state)
    return state


COPIES: list[tuple[str, Callable[[list[Document]], list[Document]], str, set[str], bool]] = [
    ("reordered copy, later", reordered, "2100-01-01T00:00:00Z", {HONEST}, True),
    ("exact copy, backdated", lambda d: d, "2000-01-01T00:00:00Z", {HOSTILE}, True),
    ("near-duplicate", extended, "2100-01-01T00:00:00Z", {HONEST, HOSTILE}, False),
]


@pytest.mark.parametrize(
    ("case", "copy", "created_at", "kept", "exact"), COPIES, ids=[c[0] for c in COPIES]
)
def test_a_copied_corpus_excludes_the_later_bundle_and_a_near_one_is_flagged(
    sites: Sites,  # noqa: F811
    tmp_path: Path,
    case: str,
    copy: Callable[[list[Document]], list[Document]],
    created_at: str,
    kept: set[str],
    exact: bool,
) -> None:
    state = _collect(sites, tmp_path, copy(honest_documents(sites)), created_at)
    assert set(state.bundles) == kept, state.exclusions
    (overlap,) = state.corpus_overlaps
    assert {overlap.site_id, overlap.other_site_id} == {HONEST, HOSTILE}
    assert overlap.exact is exact
    assert overlap.similarity == 1.0 if exact else 0.5 <= overlap.similarity < 0.9
    excluded = {(e.site_id, e.reason) for e in state.exclusions}
    assert excluded == {(s, "duplicate_corpus") for s in {HONEST, HOSTILE} - kept}


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=20, max_value=200),
    st.integers(min_value=0, max_value=200),
    st.integers(min_value=0, max_value=2**31),
)
def test_the_minhash_estimate_is_close_to_the_exact_jaccard(
    shared: int, own: int, seed: int
) -> None:
    """Oracle: the exact Jaccard similarity of the two document sets."""
    rng = random.Random(seed)

    def notes(prefix: str, n: int) -> list[Document]:
        return [Document(id=f"{prefix}{i}", text=f"{prefix} {rng.random()}") for i in range(n)]

    common = notes("c", shared)
    a = Corpus(documents=tuple(common + notes("a", own)))
    b = Corpus(documents=tuple(common + notes("b", own)))
    keys_a, keys_b = document_keys(a), document_keys(b)
    exact = len(keys_a & keys_b) / len(keys_a | keys_b)
    estimate = corpus_minhash(keys_a).jaccard(corpus_minhash(keys_b))
    assert abs(estimate - exact) <= 0.2, (estimate, exact)
