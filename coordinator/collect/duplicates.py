"""Copied synthetic corpora between the sites' accepted bundles: exact copies and near ones.

A site that sends another site's synthetic corpus takes credit for it and doubles its weight in
the pooled and FedAvg models. Each corpus is read as the set of its documents, each normalised
(case folded, whitespace collapsed), and summarised by a MinHash of that set (``datasketch``,
128 permutations), so the order of the notes does not matter:

1. Two corpora with the same documents are a copy. The bundle built later (its signed
   ``created_at``) is excluded (``duplicate_corpus``); the earlier one keeps its place. Equal
   times exclude both: the coordinator cannot tell which site made it. A copier that backdates
   its own manifest wins that tie-break; the report still names both sites.
2. Pairs whose estimated Jaccard similarity of documents is at least ``near-duplicate-share``
   (default 0.5: half of their notes in common) are flagged in the report (``CorpusOverlap``),
   not excluded: the coordinator cannot tell a copy from two sites that share templates.
"""

from __future__ import annotations

import hashlib
import itertools
import re

from datasketch import MinHash

from coordinator.run_state import RunState
from protocol import Corpus
from protocol.rounds import CorpusOverlap

PERMUTATIONS = 128
_SPACE = re.compile(r"\s+")


def document_keys(corpus: Corpus) -> frozenset[bytes]:
    """The corpus as a set: one digest per normalised document."""
    return frozenset(
        hashlib.sha256(_SPACE.sub(" ", doc.text.casefold()).strip().encode()).digest()
        for doc in corpus.documents
    )


def corpus_minhash(keys: frozenset[bytes]) -> MinHash:
    sketch = MinHash(num_perm=PERMUTATIONS, seed=1)
    sketch.update_batch(sorted(keys))
    return sketch


def corpus_overlaps(state: RunState) -> list[CorpusOverlap]:
    """Every pair of accepted corpora that are copies or near-duplicates, with the MinHash
    estimate of their Jaccard similarity."""
    keys = {
        site: document_keys(bundle.corpus)
        for site, bundle in sorted(state.bundles.items())
        if bundle.corpus is not None
    }
    sketches = {site: corpus_minhash(k) for site, k in keys.items()}
    overlaps = []
    for a, b in itertools.combinations(sorted(keys), 2):
        exact = keys[a] == keys[b]
        similarity = 1.0 if exact else float(sketches[a].jaccard(sketches[b]))
        if exact or similarity >= state.settings.near_duplicate_share:
            overlaps.append(
                CorpusOverlap(site_id=a, other_site_id=b, similarity=similarity, exact=exact)
            )
    return overlaps


def exclude_copied_corpora(state: RunState) -> None:
    """Record the overlaps in the run; for each copy, exclude the later submitter (both when
    their bundles carry the same time)."""
    overlaps = corpus_overlaps(state)
    state.corpus_overlaps.extend(overlaps)
    created = {site: b.manifest.created_at for site, b in state.bundles.items()}
    copiers: dict[str, str] = {}
    for overlap in (o for o in overlaps if o.exact):
        a, b = overlap.site_id, overlap.other_site_id
        if created[a] == created[b]:
            copiers.setdefault(a, b)
            copiers.setdefault(b, a)
        else:
            later, earlier = (a, b) if created[a] > created[b] else (b, a)
            copiers.setdefault(later, earlier)
    for site, original in sorted(copiers.items()):
        del state.bundles[site]
        state.exclude(
            site,
            "collect",
            "duplicate_corpus",
            f"its synthetic corpus holds the same documents as {original}'s, whose bundle is "
            f"{'as old' if created[site] == created[original] else 'older'}",
        )
