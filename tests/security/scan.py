"""Scan an export bundle for real text: training sentences and gold PII strings.

Every file is searched as bytes (UTF-8 needles), so JSON, JSONL, tokenizer files and
safetensors headers are all covered. Sentences are split on end punctuation and kept when
long enough to be distinctive; PII strings are the surfaces of the gold spans.
"""

from __future__ import annotations

import re
from pathlib import Path

from protocol import Corpus

MIN_SENTENCE_CHARS = 25
MIN_PII_CHARS = 5


def needles(real: Corpus) -> dict[str, str]:
    """Distinctive real strings -> what they are (``sentence of <id>`` / ``PII <label>``)."""
    found: dict[str, str] = {}
    for doc in real.documents:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", doc.text):
            sentence = sentence.strip()
            if len(sentence) >= MIN_SENTENCE_CHARS:
                found[sentence] = f"sentence of {doc.id}"
        for span in doc.spans:
            surface = doc.text[span.start : span.end].strip()
            if len(surface) >= MIN_PII_CHARS:
                found[surface] = f"PII {span.label} of {doc.id}"
    return found


def _whole(text: str) -> re.Pattern[bytes]:
    """``text`` as bytes, not inside a longer word or number (a postcode inside a hex digest
    is not a leak)."""
    return re.compile(rb"(?<![0-9A-Za-z])" + re.escape(text.encode()) + rb"(?![0-9A-Za-z])")


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def leaks(bundle: Path, real: Corpus, public: tuple[Path, ...] = ()) -> list[str]:
    """``file: what`` for every real string found in any file of ``bundle``.

    Strings already in a ``public`` folder (the base model the site started from, e.g. a word
    in its tokenizer's vocabulary) cannot have leaked through the export and are not counted.
    """
    known = b"\n".join(p.read_bytes() for folder in public for p in _files(folder))
    targets = {_whole(t): what for t, what in needles(real).items() if not _whole(t).search(known)}
    out = []
    for path in _files(bundle):
        data = path.read_bytes()
        name = path.relative_to(bundle).as_posix()
        out += [f"{name}: {what}" for pattern, what in targets.items() if pattern.search(data)]
    return out
