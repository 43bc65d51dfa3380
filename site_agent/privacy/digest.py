"""Content digests of corpora: a SHA-256 over every document's id, text and spans.

Hashing the JSON serialisation would take longer than most of the audit at 100k documents,
so the digest covers the content directly; it is stable across runs and machines and changes
with any change of id, text, span or order. (Files on disk are hashed as files: the audited
corpus's hash in ``audit.json`` is the SHA-256 of the file itself.)
"""

from __future__ import annotations

import hashlib

from protocol import Corpus


def corpus_sha256(corpus: Corpus) -> str:
    digest = hashlib.sha256()
    for doc in corpus.documents:
        spans = ";".join(f"{s.start},{s.end},{s.label}" for s in doc.spans)
        digest.update(f"{len(doc.id)}:{doc.id}|{len(doc.text)}:".encode())
        digest.update(doc.text.encode("utf-8", "surrogatepass"))
        digest.update(f"|{spans}\n".encode())
    return digest.hexdigest()
