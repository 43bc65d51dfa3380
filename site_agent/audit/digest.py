"""Content digests of corpora, equal to the SHA-256 of the JSONL file the toolkit writes."""

from __future__ import annotations

import hashlib
import json

from protocol import Corpus
from shared.corpus_io.jsonl import document_to_json


def corpus_sha256(corpus: Corpus) -> str:
    """SHA-256 of ``corpus`` serialised exactly as ``write_corpus(..., "jsonl")`` writes it."""
    digest = hashlib.sha256()
    for doc in corpus.documents:
        line = json.dumps(document_to_json(doc), ensure_ascii=False) + "\n"
        digest.update(line.encode("utf-8"))
    return digest.hexdigest()
