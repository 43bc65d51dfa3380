"""Content digests of corpora: a SHA-256 over every document's id, text and spans.

Hashing the JSON serialisation would take longer than most of the audit at 100k documents,
so the digest covers the content directly; it is stable across runs and machines and changes
with any change of id, text, span or order. (Files on disk are hashed as files: the audited
corpus's hash in ``audit.json`` is the SHA-256 of the file itself.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from protocol import Corpus, Document


class CorpusDigest:
    """:func:`corpus_sha256` taken a run of documents at a time (for corpora read in chunks)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def update(self, documents: Iterable[Document]) -> None:
        for doc in documents:
            spans = ";".join(f"{s.start},{s.end},{s.label}" for s in doc.spans)
            self._digest.update(f"{len(doc.id)}:{doc.id}|{len(doc.text)}:".encode())
            self._digest.update(doc.text.encode("utf-8", "surrogatepass"))
            self._digest.update(f"|{spans}\n".encode())

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def corpus_sha256(corpus: Corpus) -> str:
    digest = CorpusDigest()
    digest.update(corpus.documents)
    return digest.hexdigest()
