"""Deterministic train/validation/test splits of a corpus.

The same corpus, fractions and seed always give the same split, whatever the order of the
documents. With ``group_by_source`` every ``source`` (a journal, a ward, a hospital) lands in
exactly one split, so a model is never tested on the source it was trained on. Documents that
already carry ``meta["split"]`` keep it; the remaining documents fill the splits towards the
requested fractions of the whole corpus.

Units (documents, or sources when grouping) are placed largest first, each in a split that
still has room for it, drawn with the seed; with single documents this reproduces the
fractions to within one document, with sources the sizes land close to the targets.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from protocol import Corpus, Document
from shared.errors import ConfigError

DEFAULT_FRACTIONS: dict[str, float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
SPLIT_KEY = "split"


@dataclass(frozen=True)
class Unit:
    """Documents that must stay together (one document, or one source), and any pinned split."""

    key: str
    documents: tuple[Document, ...]
    pinned: str | None


def check_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    """The fractions as a dict, or a ``ConfigError`` saying what is wrong and how to fix it."""
    values = dict(fractions)
    bad = {name: f for name, f in values.items() if not (0.0 <= f <= 1.0) or math.isnan(f)}
    if not values or bad or not math.isclose(sum(values.values()), 1.0, abs_tol=1e-6):
        raise ConfigError(
            f"split fractions {values} must be between 0 and 1 and sum to 1 "
            f"(they sum to {sum(values.values()):.6g}); "
            "fix: e.g. {'train': 0.8, 'validation': 0.1, 'test': 0.1}"
        )
    return values


def pinned_split(doc: Document, names: Mapping[str, float]) -> str | None:
    """The split a document already carries in ``meta["split"]``, if any."""
    value = (doc.meta or {}).get(SPLIT_KEY)
    if value is None:
        return None
    if value not in names:
        raise ConfigError(
            f"document {doc.id!r} has meta['split'] = {value!r}, which is not one of "
            f"{list(names)}; fix: rename it to one of those, or add {value!r} to the fractions"
        )
    return str(value)


def make_units(corpus: Corpus, names: Mapping[str, float], group_by_source: bool) -> list[Unit]:
    """Documents grouped into units (by source when asked; a document without one is alone)."""
    groups: dict[str, list[Document]] = {}
    for doc in corpus.documents:
        key = f"source:{doc.source}" if group_by_source and doc.source is not None else doc.id
        groups.setdefault(key, []).append(doc)
    units = []
    for key, docs in groups.items():
        pins = {p for p in (pinned_split(d, names) for d in docs) if p is not None}
        if len(pins) > 1:
            raise ConfigError(
                f"{key} has documents already assigned to splits {sorted(pins)}, so it cannot "
                "sit in one split; fix: give all its documents the same meta['split'], or "
                "split without grouping by source"
            )
        units.append(Unit(key, tuple(docs), pins.pop() if pins else None))
    return units


def assign(units: list[Unit], fractions: Mapping[str, float], seed: int) -> dict[str, str]:
    """Split name per unit key: pinned units keep theirs, the rest fill the splits.

    Larger units go first (a big source placed last would overshoot its split). Each unit goes
    to a split it fits in, drawn with the seed in proportion to how much room is left; when it
    fits nowhere, to the split with the most room.
    """
    total = sum(len(u.documents) for u in units)
    room = {name: fraction * total for name, fraction in fractions.items()}
    chosen: dict[str, str] = {}
    for unit in units:
        if unit.pinned is not None:
            chosen[unit.key] = unit.pinned
            room[unit.pinned] -= len(unit.documents)
    rng = random.Random(seed)
    free = sorted((u for u in units if u.pinned is None), key=lambda u: u.key)
    rng.shuffle(free)
    free.sort(key=lambda u: -len(u.documents))
    open_splits = [name for name, fraction in fractions.items() if fraction > 0]
    for unit in free:
        size = len(unit.documents)
        fits = [name for name in open_splits if room[name] >= size]
        if fits:
            name = rng.choices(fits, weights=[room[n] for n in fits])[0]
        else:
            name = max(open_splits, key=lambda n: room[n])
        chosen[unit.key] = name
        room[name] -= size
    return chosen


def split_corpus(
    corpus: Corpus,
    fractions: Mapping[str, float] | None = None,
    *,
    seed: int = 0,
    group_by_source: bool = False,
) -> dict[str, Corpus]:
    """Named corpora (in the order of ``fractions``) that partition ``corpus``.

    Every split keeps the full label set, documents keep their corpus order, and the
    provenance notes record the split name, seed, fractions and grouping.
    """
    fractions = check_fractions(fractions if fractions is not None else DEFAULT_FRACTIONS)
    units = make_units(corpus, fractions, group_by_source)
    chosen = assign(units, fractions, seed)
    split_of = {doc.id: chosen[u.key] for u in units for doc in u.documents}
    notes = {
        "split_seed": str(seed),
        "split_fractions": json.dumps(fractions),
        "split_grouped_by": "source" if group_by_source else "document",
    }
    out = {}
    for name in fractions:
        documents = tuple(d for d in corpus.documents if split_of[d.id] == name)
        provenance = corpus.provenance.model_copy(
            update={"notes": {**corpus.provenance.notes, **notes, "split": name}}
        )
        out[name] = Corpus(documents=documents, labels=corpus.labels, provenance=provenance)
    return out
