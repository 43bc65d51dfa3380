"""PII echo: gold PII surface strings of the real corpus found again in the synthetic corpus.

Every gold span's text - plus any extra surfaces, such as both the originals and the
surrogates when pseudonymisation ran - is searched in every synthetic document as a sequence
of whole words (see ``surfaces.py``: case, punctuation and spacing do not matter, and "Ana"
never matches inside "Anatomía"). The tests check the matches against an Aho-Corasick
automaton (pyahocorasick) over the same word sequences.

Short and common surfaces need care, or every document would be dropped:

- a surface shorter than ``min_chars`` (default 4: the sex markers "H"/"M", ages such as
  "70") is not searched at all;
- a surface that occurs in the *text* of many real documents ("Madrid", "un mes", "Hospital
  General": more than ``max_document_fraction`` of them, and always more than one) is common
  language: counted, never identifying;
- with ``require_specific`` (default), a surface identifies only if it is specific: two or
  more words of letters (a full name, a street, an e-mail address) or five or more digits (an
  id, a phone number, a full date). Single first names or towns are counted, not dropped.

Extra surfaces are always identifying. Only identifying echoes drop a document. Counts are
reported per label, never the strings.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol import Corpus
from site_agent.audit.context import AuditContext, ExtraSurface
from site_agent.audit.policy import PiiEchoSettings
from site_agent.audit.registry import register_measure
from site_agent.audit.surfaces import SurfaceIndex, surface_hashes
from site_agent.audit.tokens import TokenStream, word_stream

EXTRA_LABEL = "EXTRA"


@dataclass(frozen=True)
class Surface:
    text: str
    raw: str
    label: str
    identifying: bool


_SEPARATORS = re.compile(r"[\W_]+")


def normalise_surface(text: str) -> str:
    """Lower-cased words joined by single spaces (for lengths and for reading)."""
    return _SEPARATORS.sub(" ", text.lower()).strip()


def is_specific(surface: str) -> bool:
    """Two words of letters or five digits: enough to point at someone."""
    words = re.findall(r"[^\W\d_]{2,}", surface)
    return len(words) >= 2 or sum(c.isdigit() for c in surface) >= 5


def _gold_surfaces(real: Corpus, settings: PiiEchoSettings) -> tuple[list[str], list[str]]:
    raws, labels = [], []
    ignored = set(settings.ignore_labels)
    for doc in real.documents:
        for span in doc.spans:
            raw = doc.surface(span)
            if span.label not in ignored and len(normalise_surface(raw)) >= settings.min_chars:
                raws.append(raw)
                labels.append(span.label)
    return raws, labels


def _group(raws: list[str], labels: list[str]) -> dict[int, tuple[str, Counter[str]]]:
    """One entry per distinct word sequence: its first spelling and its labels."""
    hashes, lengths = surface_hashes(raws)
    grouped: dict[int, tuple[str, Counter[str]]] = {}
    for raw, label, key, size in zip(raws, labels, hashes.tolist(), lengths.tolist(), strict=True):
        if size:
            grouped.setdefault(key, (raw, Counter()))[1][label] += 1
    return grouped


def collect_surfaces(
    real: Corpus,
    settings: PiiEchoSettings,
    extra: Iterable[ExtraSurface] = (),
    real_stream: TokenStream | None = None,
) -> list[Surface]:
    """The surfaces to search, each with its most frequent label and whether it identifies."""
    grouped = _group(*_gold_surfaces(real, settings))
    raws = [raw for raw, _ in grouped.values()]
    stream = real_stream if real_stream is not None else word_stream(real.documents)
    docs, found = SurfaceIndex.build(raws).match(stream)
    pairs = np.unique(docs * max(len(raws), 1) + found)
    frequency = np.bincount(pairs % max(len(raws), 1), minlength=len(raws))
    limit = max(1, math.floor(settings.max_document_fraction * len(real.documents)))
    surfaces = {
        key: Surface(
            normalise_surface(raw),
            raw,
            labels.most_common(1)[0][0],
            bool(frequency[i] <= limit)
            and (is_specific(raw.lower()) or not settings.require_specific),
        )
        for i, (key, (raw, labels)) in enumerate(grouped.items())
    }
    extra_items = [(EXTRA_LABEL, e) if isinstance(e, str) else e for e in extra]
    extra_items = [e for e in extra_items if len(normalise_surface(e[1])) >= settings.min_chars]
    hashes, lengths = surface_hashes([raw for _, raw in extra_items])
    for (label, raw), key, size in zip(extra_items, hashes.tolist(), lengths.tolist(), strict=True):
        if size:
            known = surfaces.get(key)
            surfaces[key] = Surface(
                normalise_surface(raw), raw, known.label if known else label, True
            )
    return list(surfaces.values())


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
    surfaces = collect_surfaces(
        context.real, settings, context.extra_pii_surfaces, context.stream("real")
    )
    index = SurfaceIndex.build([s.raw for s in surfaces])
    docs, keys = index.match(context.stream("synthetic"))
    return PiiEchoResult(tuple(surfaces), docs, keys, len(context.synthetic.documents), settings)
