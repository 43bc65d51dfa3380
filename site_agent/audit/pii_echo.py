"""PII echo: gold PII surface strings of the real corpus found again in the synthetic corpus.

Every gold span's text (lower-cased, spaces collapsed) - plus any extra surfaces, such as both
the originals and the surrogates when pseudonymisation ran - goes into one Aho-Corasick
automaton, and every synthetic document is scanned once.

Short and common surfaces need care, or every document would be dropped:

- a surface shorter than ``min_chars`` (default 4: the sex markers "H"/"M", ages such as
  "70") is not searched at all;
- a match must start and end at a word boundary, so "Ana" does not match inside "Anatomía";
- a surface that occurs in the *text* of many real documents ("Madrid", "un mes", "Hospital
  General": more than ``max_document_fraction`` of them, and always more than one) is common
  language: counted, never identifying;
- with ``require_specific`` (default), a surface identifies only if it is specific: two or
  more words of letters (a full name, a street), five or more digits (an id, a phone number,
  a full date) or an e-mail address. Single first names or towns are counted, not dropped.

Extra surfaces are always identifying. Only identifying echoes drop a document. Counts are
reported per label, never the strings.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import ahocorasick
import numpy as np

from protocol import Corpus
from site_agent.audit.context import AuditContext, ExtraSurface
from site_agent.audit.policy import PiiEchoSettings
from site_agent.audit.registry import register_measure
from site_agent.audit.tokens import is_word_char, lower_keep_length

EXTRA_LABEL = "EXTRA"


@dataclass(frozen=True)
class Surface:
    text: str
    label: str
    identifying: bool


def normalise_surface(text: str) -> str:
    return " ".join(lower_keep_length(text).split())


def is_specific(surface: str) -> bool:
    """Two words of letters, five digits, or an e-mail address: enough to point at someone."""
    words = re.findall(r"[^\W\d_]{2,}", surface)
    return len(words) >= 2 or sum(c.isdigit() for c in surface) >= 5 or "@" in surface


def _gold_surfaces(real: Corpus, settings: PiiEchoSettings) -> dict[str, Counter[str]]:
    labels: dict[str, Counter[str]] = defaultdict(Counter)
    ignored = set(settings.ignore_labels)
    for doc in real.documents:
        for span in doc.spans:
            key = normalise_surface(doc.surface(span))
            if len(key) >= settings.min_chars and span.label not in ignored:
                labels[key][span.label] += 1
    return labels


def collect_surfaces(
    real: Corpus, settings: PiiEchoSettings, extra: Iterable[ExtraSurface] = ()
) -> list[Surface]:
    """The surfaces to search, each with its most frequent label and whether it identifies."""
    labels = _gold_surfaces(real, settings)
    keys = sorted(labels)
    docs, found = scan(
        build_automaton(keys), (d.text for d in real.documents), settings.word_boundary
    )
    pairs = np.unique(docs * max(len(keys), 1) + found)
    frequency = np.bincount(pairs % max(len(keys), 1), minlength=len(keys))
    limit = max(1, math.floor(settings.max_document_fraction * len(real.documents)))
    surfaces = {
        key: Surface(
            key,
            labels[key].most_common(1)[0][0],
            bool(frequency[i] <= limit) and (is_specific(key) or not settings.require_specific),
        )
        for i, key in enumerate(keys)
    }
    for item in extra:
        label, text = (EXTRA_LABEL, item) if isinstance(item, str) else item
        key = normalise_surface(text)
        if len(key) >= settings.min_chars:
            surfaces[key] = Surface(key, label, True)
    return sorted(surfaces.values(), key=lambda s: s.text)


def build_automaton(keys: Sequence[str]) -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for index, key in enumerate(keys):
        automaton.add_word(key, (index, key))
    if keys:
        automaton.make_automaton()
    return automaton


def find_matches(
    automaton: ahocorasick.Automaton, text: str, word_boundary: bool = True
) -> list[int]:
    """Indices of the keys found in (already lower-cased) ``text``, once per occurrence."""
    if automaton.kind != ahocorasick.AHOCORASICK:
        return []
    found = []
    for end, (index, key) in automaton.iter(text):
        start = end - len(key) + 1
        if word_boundary and (
            (start > 0 and is_word_char(key[0]) and is_word_char(text[start - 1]))
            or (end + 1 < len(text) and is_word_char(key[-1]) and is_word_char(text[end + 1]))
        ):
            continue
        found.append(index)
    return found


def scan(
    automaton: ahocorasick.Automaton, texts: Iterable[str], word_boundary: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(document, key index) for every match in every text."""
    docs: list[int] = []
    keys: list[int] = []
    for doc, text in enumerate(texts):
        hits = find_matches(automaton, " ".join(lower_keep_length(text).split()), word_boundary)
        docs.extend([doc] * len(hits))
        keys.extend(hits)
    return np.asarray(docs, dtype=np.int64), np.asarray(keys, dtype=np.int64)


@dataclass(frozen=True)
class PiiEchoResult:
    surfaces: tuple[Surface, ...]
    match_docs: np.ndarray
    match_keys: np.ndarray
    n_docs: int
    settings: PiiEchoSettings

    def identifying_docs(self) -> np.ndarray:
        flagged = np.zeros(self.n_docs, dtype=bool)
        identifying = np.array([s.identifying for s in self.surfaces], dtype=bool)
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
            "identifying_occurrences": int(ident.sum()),
            "by_label": by_label,
        }


@register_measure("pii_echo")
def measure_pii_echo(context: AuditContext) -> PiiEchoResult:
    settings = context.policy.pii_echo
    surfaces = collect_surfaces(context.real, settings, context.extra_pii_surfaces)
    automaton = build_automaton([s.text for s in surfaces])
    docs, keys = scan(
        automaton, (d.text for d in context.synthetic.documents), settings.word_boundary
    )
    return PiiEchoResult(tuple(surfaces), docs, keys, len(context.synthetic.documents), settings)
