"""PII echo: gold PII surface strings of the real corpus found again in the synthetic corpus.

Every gold span's text - plus any extra surfaces, such as both the originals and the
surrogates when pseudonymisation ran - is searched in every synthetic document as a sequence
of whole words, by one Aho-Corasick automaton (pyahocorasick) over all the surfaces (see
``surfaces.py``: case, punctuation and spacing do not matter, and "Ana" never matches inside
"Anatomía"). The same automaton over the real corpus counts the real documents that contain
each surface. The tests check the matches against a slow reference: one regular expression
per surface over the words of each document.

Short and common surfaces need care, or every document would be dropped:

- a surface shorter than ``min_chars`` (default 4: the sex markers "H"/"M", ages such as
  "70") is not searched at all;
- a surface that occurs in the *text* of many real documents ("Madrid", "un mes", "Hospital
  General": more than ``max_document_fraction`` of them, and always more than one) is common
  language: counted, never identifying;
- with ``require_specific`` (default), a surface identifies only if it is specific (see
  :func:`~site_agent.privacy.specific.is_specific`): two capitalised words (a full name, a
  street), an e-mail address, or six digits that are not a date (an id, a phone number), and
  not of a label shared by many people (a date, age, sex, country, town or profession: on
  full MEDDOCAN, 388 of 1,939 template notes were dropped for a two-word country name such as
  "Reino Unido"). Single first names, towns, postal codes, dates and phrases such as "dos
  días" are counted, not dropped.

Extra surfaces identify by the same rules as gold ones: an echoed surrogate full name drops
the note, an echoed surrogate age, date or first name is counted. Faker's ages, dates and
common names collide with the real ones and with each other by chance, and a fake string says
nothing about a real person unless it is specific enough to point at a record of the training
text. On MEDDOCAN, when every surrogate counted as identifying, 18 of 61 template-mode notes
were dropped for a surrogate alone, though no identifier ever reached their generator.
``extra_always_identify`` restores that stricter rule (for a deny-list of strings that must
never appear).

Only identifying echoes drop a document. Counts are reported per label, never the strings,
and apart by origin: a *gold* surface is a real PII string of the training corpus (a real
identity leaked); an extra surface that is not also a gold string is a *surrogate* (in the
pipeline: the fake PII the generator saw in its pseudonymised training text, so an echo shows
memorisation of training text, not a real identity; with ``site-agent audit --extra-pii``:
the strings given there).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol import Corpus
from site_agent.audit.context import AuditContext, ExtraSurface, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.policy import PiiEchoSettings
from site_agent.audit.registry import Reread, register_measure
from site_agent.audit.surface_hits import SurfaceHits
from site_agent.privacy.specific import is_specific
from site_agent.privacy.surfaces import SurfaceMatcher, has_words, normalise_surface, surface_keys

EXTRA_LABEL = "EXTRA"
GOLD, SURROGATE = "gold", "surrogate"


@dataclass(frozen=True)
class Surface:
    text: str
    raw: str
    label: str
    identifying: bool
    origin: str = GOLD  # GOLD: a real PII string of the training corpus; else SURROGATE


def _gold_surfaces(real: Corpus, settings: PiiEchoSettings) -> dict[str, Counter[str]]:
    """Every distinct gold span text long enough to search, with its labels."""
    labels: dict[str, Counter[str]] = defaultdict(Counter)
    ignored = set(settings.ignore_labels)
    for doc in real.documents:
        for span in doc.spans:
            if span.label not in ignored:
                labels[doc.text[span.start : span.end]][span.label] += 1
    return {raw: c for raw, c in labels.items() if len(raw.strip()) >= settings.min_chars}


@dataclass
class _Group:
    raw: str
    labels: Counter[str]


def _group(spelled: dict[str, Counter[str]]) -> dict[str, _Group]:
    """One entry per distinct word sequence (its automaton key): first spelling and labels."""
    raws = list(spelled)
    grouped: dict[str, _Group] = {}
    for raw, key in zip(raws, surface_keys(raws), strict=True):
        if has_words(key):
            grouped.setdefault(key, _Group(raw, Counter())).labels.update(spelled[raw])
    return grouped


def _extra_spellings(
    extra: Iterable[ExtraSurface], settings: PiiEchoSettings
) -> dict[str, Counter[str]]:
    """Every distinct extra surface long enough to search, with its labels (as the gold ones)."""
    labels: dict[str, Counter[str]] = defaultdict(Counter)
    for item in extra:
        label, raw = (EXTRA_LABEL, item) if isinstance(item, str) else item
        if len(raw.strip()) >= settings.min_chars:
            labels[raw][label] += 1
    return labels


def collect_surfaces(
    real: Corpus, settings: PiiEchoSettings, extra: Iterable[ExtraSurface] = ()
) -> list[Surface]:
    """The surfaces to search, each with its most frequent label and whether it identifies.

    A surface that is a gold string and an extra one too keeps the gold label and origin."""
    gold = _group(_gold_surfaces(real, settings))
    extra_groups = _group(_extra_spellings(extra, settings))
    grouped = {**extra_groups, **gold}
    keys = list(grouped)
    docs, found = SurfaceMatcher.from_keys(keys).match(real.documents)
    width = max(len(keys), 1)
    frequency = np.bincount(np.unique(docs * width + found) % width, minlength=len(keys))
    limit = max(1, math.floor(settings.max_document_fraction * len(real.documents)))
    surfaces = []
    for i, (key, group) in enumerate(grouped.items()):
        identifying = bool(frequency[i] <= limit) and (
            is_specific(group.raw, group.labels.most_common(1)[0][0])
            or not settings.require_specific
        )
        surfaces.append(
            Surface(
                normalise_surface(group.raw),
                group.raw,
                group.labels.most_common(1)[0][0],
                identifying or (settings.extra_always_identify and key in extra_groups),
                GOLD if key in gold else SURROGATE,
            )
        )
    return surfaces


@dataclass(frozen=True)
class PiiEchoResult:
    surfaces: tuple[Surface, ...]
    match_docs: np.ndarray
    match_keys: np.ndarray
    n_docs: int
    settings: PiiEchoSettings

    def identifying_docs(self, origin: str | None = None) -> np.ndarray:
        """Documents with an identifying echo (of surfaces of ``origin`` only, when given)."""
        flagged = np.zeros(self.n_docs, dtype=bool)
        identifying = np.array(
            [s.identifying and origin in (None, s.origin) for s in self.surfaces], dtype=bool
        )
        if len(self.match_keys):
            flagged[self.match_docs[identifying[self.match_keys]]] = True
        return flagged

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        names = sorted({s.label for s in self.surfaces})
        label_of = np.array([names.index(s.label) for s in self.surfaces], dtype=np.int64)
        identifying = np.array([s.identifying for s in self.surfaces], dtype=bool)
        chosen = kept[self.match_docs]
        docs, keys = self.match_docs[chosen], self.match_keys[chosen]
        labels, ident = label_of[keys], identifying[keys]
        width = max(len(names), 1)

        def per_label(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            occurrences = np.bincount(labels[mask], minlength=width)
            pairs = np.unique(docs[mask] * width + labels[mask])
            return occurrences, np.bincount(pairs % width, minlength=width)

        every, every_docs = per_label(np.ones(len(keys), dtype=bool))
        named, named_docs = per_label(ident)
        by_label = {
            name: {
                "occurrences": int(every[i]),
                "documents": int(every_docs[i]),
                "identifying_occurrences": int(named[i]),
                "identifying_documents": int(named_docs[i]),
            }
            for i, name in enumerate(names)
        }
        return {
            "surfaces_searched": len(self.surfaces),
            "identifying_surfaces": int(identifying.sum()),
            "min_chars": self.settings.min_chars,
            "max_document_fraction": self.settings.max_document_fraction,
            "documents_with_any": len(np.unique(docs)),
            "identifying_documents": int((self.identifying_docs() & kept).sum()),
            "identifying_documents_gold": int((self.identifying_docs(GOLD) & kept).sum()),
            "identifying_documents_surrogate_only": int(
                (self.identifying_docs(SURROGATE) & ~self.identifying_docs(GOLD) & kept).sum()
            ),
            "surrogate_surfaces": sum(s.origin == SURROGATE for s in self.surfaces),
            "identifying_occurrences": int(ident.sum()),
            "by_label": by_label,
        }


class _PiiEcho:
    """The surfaces and their automaton built once; each chunk adds its matches."""

    def __init__(self, context: AuditContext) -> None:
        self.settings = context.policy.pii_echo
        self.surfaces = collect_surfaces(context.real, self.settings, context.extra_pii_surfaces)
        self.hits = SurfaceHits(SurfaceMatcher.build([s.raw for s in self.surfaces]))

    def add(self, chunk: SyntheticChunk) -> None:
        self.hits.add(chunk)

    def finish(self, reread: Reread) -> PiiEchoResult:
        docs, keys = self.hits.arrays()
        return PiiEchoResult(tuple(self.surfaces), docs, keys, self.hits.n_docs, self.settings)


PII_ECHO_FIGURES = (
    "surfaces_searched",
    "identifying_surfaces",
    "min_chars",
    "max_document_fraction",
    "documents_with_any",
    "identifying_documents",
    "identifying_documents_gold",
    "identifying_documents_surrogate_only",
    "surrogate_surfaces",
    "identifying_occurrences",
    "by_label.*.occurrences",
    "by_label.*.documents",
    "by_label.*.identifying_occurrences",
    "by_label.*.identifying_documents",
)


@register_measure("pii_echo", PII_ECHO_FIGURES)
def measure_pii_echo(context: AuditContext, found: NgramsFound) -> _PiiEcho:
    return _PiiEcho(context)
