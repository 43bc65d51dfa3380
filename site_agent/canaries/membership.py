"""Membership canaries: short notes planted in the generator's adaptation text, half kept out.

Each canary is the opening of a random pseudonymised training note (in-distribution
context), a surrogate name, and a secret of random words from the training vocabulary (high
perplexity: any order of words is as likely as any other, so only memorisation makes the
generator write it). ``member_fraction`` of the canaries are appended to the adaptation text
as extra notes; the others are made identically and never written anywhere but the site's
private record. Whether an adversary who only sees the synthetic corpus can tell the two
groups apart is what ``site_agent.audit.membership`` measures.

Everything follows from the corpus and the seed: the same seed plants the same canaries.
"""

from __future__ import annotations

import random
import re
import secrets
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from protocol import Corpus, Document, Span
from protocol.audit import MembershipCanary, MembershipCanarySet
from shared.errors import UsageError
from shared.provenance import tool_version
from site_agent.canaries.identifiers import kind_of
from site_agent.privacy.digest import corpus_sha256
from site_agent.privacy.tokens import reference_words

if TYPE_CHECKING:
    from faker import Faker

    from site_agent.canaries.settings import CanarySettings

CANARY_SOURCE = "membership-canary"
_WORD = re.compile(r"\S+")


def is_membership_canary(doc: Document) -> bool:
    """Whether ``doc`` is a planted membership canary rather than a training note."""
    return doc.source == CANARY_SOURCE


def secret_vocabulary(corpus: Corpus, min_document_frequency: int) -> tuple[str, ...]:
    """Words of 4-14 letters outside gold spans, in enough training notes (sorted). A word is
    what the audit's word tokenizer calls one, lower-cased, so each secret word is one word."""
    frequency: Counter[str] = Counter()
    for doc in corpus.documents:
        text = doc.text
        for span in doc.spans:  # identifiers never become secret words
            text = text[: span.start] + " " * (span.end - span.start) + text[span.end :]
        frequency.update({w for w in reference_words(text) if 4 <= len(w) <= 14 and w.isalpha()})
    return tuple(sorted(w for w, n in frequency.items() if n >= min_document_frequency))


def draw_secret(rng: random.Random, vocabulary: tuple[str, ...], words: int) -> str:
    """``words`` distinct words of ``vocabulary`` in random order."""
    return " ".join(rng.sample(vocabulary, words))


def _opening(doc: Document, words: int) -> tuple[str, tuple[Span, ...]]:
    """The first ``words`` words of ``doc`` (cut before a span that would be split)."""
    ends = [m.end() for m in _WORD.finditer(doc.text)]
    end = ends[min(words, len(ends)) - 1] if words and ends else 0
    for span in doc.spans:
        if span.start < end < span.end:
            end = span.start
    text = doc.text[:end].rstrip()
    return text, tuple(s for s in doc.spans if s.end <= len(text))


def _name_label(corpus: Corpus) -> str | None:
    """The most frequent label of the corpus's name spans (the identifier's label)."""
    labels = Counter(
        s.label
        for d in corpus.documents
        for s in d.spans
        if kind_of(s.label, d.surface(s)) == "name"
    )
    return labels.most_common(1)[0][0] if labels else None


def _unique_name(fake: Faker, taken: set[str], haystack: str) -> str:
    for _ in range(1000):
        name = f"{fake.first_name()} {fake.last_name()} {fake.last_name()}"
        if name not in taken and name.lower() not in haystack:
            taken.add(name)
            return name
    raise UsageError("could not make a unique surrogate name; fix: set another canary seed")


def _canary_document(
    canary_id: str, host: Document, name: str, secret: str, label: str | None, words: int
) -> Document:
    opening, spans = _opening(host, words)
    head = f"{opening} " if opening else ""
    start = len(head)
    text = f"{head}{name}: {secret}."
    name_span = (Span(start=start, end=start + len(name), label=label),) if label else ()
    return Document(id=canary_id, text=text, spans=spans + name_span, source=CANARY_SOURCE)


def make_membership_canaries(
    corpus: Corpus, settings: CanarySettings, *, locale: str = "es_ES"
) -> tuple[Corpus, MembershipCanarySet]:
    """``corpus`` with the member canaries appended, and the record of all of them."""
    seed = settings.seed if settings.seed is not None else secrets.randbits(63)
    vocabulary = secret_vocabulary(corpus, settings.min_document_frequency)
    if len(vocabulary) < 2 * settings.secret_words:
        raise UsageError(
            f"only {len(vocabulary)} words occur in >= {settings.min_document_frequency} "
            f"training notes; secrets of {settings.secret_words} words need at least "
            f"{2 * settings.secret_words}; fix: lower [audit.canaries] min_document_frequency "
            "or secret_words"
        )
    if not corpus.documents:
        raise UsageError("no training notes to open canaries with; fix: check the split")
    from faker import Faker  # only planting needs it

    rng = random.Random(seed)
    fake = Faker(locale)
    fake.seed_instance(seed)
    taken_ids = {d.id for d in corpus.documents}
    haystack = " ".join(d.text.lower() for d in corpus.documents)
    label = _name_label(corpus)
    n_members = min(max(1, round(settings.count * settings.member_fraction)), settings.count - 1)
    member_slots = set(rng.sample(range(settings.count), n_members))
    names: set[str] = set()
    seen_secrets: set[str] = set()
    canaries, planted = [], []
    for index in range(settings.count):
        canary_id = f"{CANARY_SOURCE}-{index:05d}"
        if canary_id in taken_ids:
            raise UsageError(f"training note id {canary_id!r} clashes with a canary id")
        secret = draw_secret(rng, vocabulary, settings.secret_words)
        while secret in seen_secrets:
            secret = draw_secret(rng, vocabulary, settings.secret_words)
        seen_secrets.add(secret)
        name = _unique_name(fake, names, haystack)
        host = corpus.documents[rng.randrange(len(corpus.documents))]
        doc = _canary_document(canary_id, host, name, secret, label, settings.prefix_words)
        member = index in member_slots
        if member:
            planted.append(doc)
        canaries.append(
            MembershipCanary(
                id=canary_id, member=member, identifier=name, secret=secret, text=doc.text
            )
        )
    copy = corpus.model_copy(update={"documents": (*corpus.documents, *planted)})
    record = MembershipCanarySet(
        tool_version=tool_version(),
        seed=seed,
        secret_words=settings.secret_words,
        vocabulary=vocabulary,
        source_corpus_sha256=corpus_sha256(corpus),
        planted_corpus_sha256=corpus_sha256(copy),
        canaries=tuple(canaries),
    )
    return copy, record


def load_membership_canaries(path: Path | None) -> MembershipCanarySet | None:
    """The record in ``path``; ``None`` when there is no file or it is empty (none planted)."""
    if path is None or not path.is_file() or not path.stat().st_size:
        return None
    return MembershipCanarySet.model_validate_json(path.read_text(encoding="utf-8"))
