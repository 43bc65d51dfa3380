"""Identifier canaries: unique fake identifiers planted in a copy of the training corpus.

Planting replaces the text of existing gold PII spans of the right kind (a name span gets a
fake name, a date span a fake date, ...) so each canary sits in a realistic context and is
itself a gold span of the copy. Each canary is checked not to occur anywhere in the original
corpus. The copy is what the generator is then adapted on; ``canaries.json`` records what was
planted where and stays on the site. How many of them (and of the 5-word contexts around
them) the synthetic corpus reproduces is the audit's canary exposure measure
(``site_agent.audit.canary_exposure``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from protocol import Corpus, Document, Span
from protocol.audit import Canary, CanaryKind, CanarySet
from shared.errors import UsageError
from shared.label_families import label_words
from shared.provenance import tool_version
from site_agent.privacy.digest import corpus_sha256
from site_agent.privacy.surfaces import normalise_surface

if TYPE_CHECKING:
    from faker import Faker


def _digits_like(original: str, rng: random.Random) -> str:
    return re.sub(r"\d", lambda _: str(rng.randint(0, 9)), original)


@dataclass(frozen=True)
class CanaryKindSpec:
    """How to recognise a span of this kind and make a fake value for it."""

    label_words: frozenset[str]
    shape: re.Pattern[str]
    fake: Callable[[Faker, random.Random, str], str]


def _fake_date(fake: Faker, rng: random.Random, original: str) -> str:
    separator = next((c for c in "/-." if c in original), "/")
    return fake.date(pattern=f"%d{separator}%m{separator}%Y")


def _fake_number(fake: Faker, rng: random.Random, original: str) -> str:
    if sum(c.isdigit() for c in original) >= 6:
        return _digits_like(original, rng)
    return str(rng.randint(10**7, 10**8 - 1))


KINDS: dict[CanaryKind, CanaryKindSpec] = {
    "id": CanaryKindSpec(
        frozenset({"ID", "NHC", "MRN", "IDNUM", "SSN", "NASS", "MEDICALRECORD", "HEALTHPLAN"}),
        re.compile(r"^(?=(?:\D*\d){4})[\w\s./-]+$"),
        _fake_number,
    ),
    "phone": CanaryKindSpec(
        frozenset({"TELEFONO", "PHONE", "FAX", "NUMERO"}),
        re.compile(r"^\+?[\d\s().-]{9,}$"),
        _fake_number,
    ),
    "date": CanaryKindSpec(
        frozenset({"FECHA", "FECHAS", "DATE", "DATES"}),
        re.compile(r"^\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}$"),
        _fake_date,
    ),
    "name": CanaryKindSpec(
        frozenset({"NOMBRE", "NAME", "PATIENT", "DOCTOR", "PERSON", "PER", "FAMILIARES"}),
        re.compile(r"^[^\W\d_]+(?:[\s'-][^\W\d_]+)+$"),
        lambda fake, rng, original: f"{fake.first_name()} {fake.last_name()} {fake.last_name()}",
    ),
}


def kind_of(label: str, surface: str) -> CanaryKind | None:
    """The canary kind a gold span can carry: by label words first, then by its shape."""
    words = label_words(label)
    for kind, spec in KINDS.items():
        if words & spec.label_words and spec.shape.match(surface.strip()):
            return kind
    return None


def _candidates(corpus: Corpus) -> dict[CanaryKind, list[tuple[int, int]]]:
    found: dict[CanaryKind, list[tuple[int, int]]] = {kind: [] for kind in KINDS}
    for d, doc in enumerate(corpus.documents):
        for s, span in enumerate(doc.spans):
            kind = kind_of(span.label, doc.surface(span))
            if kind is not None:
                found[kind].append((d, s))
    return found


def _choose(corpus: Corpus, k: int, rng: random.Random) -> list[tuple[CanaryKind, int, int]]:
    found = {kind: spans for kind, spans in _candidates(corpus).items() if spans}
    if not found:
        raise UsageError(
            "no gold span can carry a canary (names, ids, phone numbers, dates); fix: plant "
            "canaries in an annotated corpus with such labels"
        )
    kinds = sorted(found)
    for spans in found.values():
        rng.shuffle(spans)
    chosen: list[tuple[CanaryKind, int, int]] = []
    used: set[tuple[int, int]] = set()
    for i in range(k):
        kind = kinds[i % len(kinds)]
        free = [c for c in found[kind] if c not in used]
        if not free:
            raise UsageError(f"only {len(chosen)} spans can carry canaries; fix: plant fewer")
        fresh_docs = {d for _, d, _ in chosen}
        pick = next((c for c in free if c[0] not in fresh_docs), free[0])
        used.add(pick)
        chosen.append((kind, *pick))
    return chosen


def plant_canaries(
    corpus: Corpus, k: int, *, seed: int = 0, locale: str = "es_ES"
) -> tuple[Corpus, CanarySet]:
    """A copy of ``corpus`` with ``k`` unique fake identifiers planted as gold spans."""
    if k < 1:
        raise UsageError(f"--plant-canaries must be >= 1, got {k}")
    rng = random.Random(seed)
    from faker import Faker  # only planting needs it

    fake = Faker(locale)
    fake.seed_instance(seed)
    haystack = f" {' '.join(normalise_surface(d.text) for d in corpus.documents)} "
    values: dict[tuple[int, int], tuple[CanaryKind, str]] = {}
    taken: set[str] = set()
    for kind, d, s in _choose(corpus, k, rng):
        doc = corpus.documents[d]
        for _ in range(100):
            value = KINDS[kind].fake(fake, rng, doc.surface(doc.spans[s]))
            key = normalise_surface(value)
            if key not in taken and f" {key} " not in haystack:
                break
        else:
            raise UsageError(f"could not make a unique fake {kind}; fix: use another --seed")
        taken.add(key)
        values[(d, s)] = (kind, value)
    documents = list(corpus.documents)
    canaries: list[Canary] = []
    for d in sorted({d for d, _ in values}):
        documents[d], planted = _replace(
            documents[d], {s: v for (dd, s), v in values.items() if dd == d}
        )
        canaries.extend(planted)
    copy = corpus.model_copy(update={"documents": tuple(documents)})
    record = CanarySet(
        tool_version=tool_version(),
        seed=seed,
        locale=locale,
        source_corpus_sha256=corpus_sha256(corpus),
        planted_corpus_sha256=corpus_sha256(copy),
        canaries=tuple(canaries),
    )
    return copy, record


def _replace(
    doc: Document, values: dict[int, tuple[CanaryKind, str]]
) -> tuple[Document, list[Canary]]:
    text, spans, planted, shift, cursor = [], [], [], 0, 0
    for index, span in enumerate(doc.spans):
        start, end = span.start + shift, span.end + shift
        if index in values:
            kind, value = values[index]
            text.append(doc.text[cursor : span.start] + value)
            cursor = span.end
            end = start + len(value)
            shift += len(value) - (span.end - span.start)
            planted.append(
                Canary(
                    value=value,
                    kind=kind,
                    label=span.label,
                    document_id=doc.id,
                    start=start,
                    end=end,
                )
            )
        spans.append(Span(start=start, end=end, label=span.label))
    text.append(doc.text[cursor:])
    return Document(
        id=doc.id, text="".join(text), spans=tuple(spans), source=doc.source, meta=doc.meta
    ), planted


def load_canaries(path: Path | None) -> CanarySet | None:
    """The record in ``path``; ``None`` when there is no file or it is empty (none planted)."""
    if path is None or not path.is_file() or not path.stat().st_size:
        return None
    return CanarySet.model_validate_json(path.read_text(encoding="utf-8"))
