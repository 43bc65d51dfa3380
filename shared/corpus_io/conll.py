"""CoNLL-style IOB2 token files: ``token<TAB>tag<TAB>gap`` per line.

Layout written (and read):

    # id = S0004-06142005000500011-1
    # source = 0004-0614            (optional)
    # meta = {"split": "train"}     (optional, JSON)
    # lead = "  "                   (optional, JSON: whitespace before the first token)
    Juan<TAB>B-PER<TAB>" "
    vive<TAB>O<TAB>"\\n"
    <blank line: sentence break after a line break in the text>

The third column is the whitespace that follows the token, as a JSON string, so the text is
rebuilt exactly: ``text = lead + token1 + gap1 + token2 + gap2 + ...``. Files from elsewhere
may omit it; tokens are then joined by one space and sentences by a line break.

Documents start at ``# id = ...`` or ``-DOCSTART-`` lines. A file with neither is read as one
document per blank-line-separated block (ids ``<file stem>-<n>``). Comment lines are lines
that start with ``#`` and hold no tab; unknown ``# key = value`` comments are ignored.

Writing tokenizes with :func:`tokenize`, which never lets a token cross a span edge, so every
span is token-aligned and JSONL -> CoNLL -> JSONL loses nothing; CoNLL -> spans -> CoNLL is
exact for files this writer produced (other tokenizations are re-tokenized).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from protocol import Corpus, Document, Span
from shared.atomic import atomic_open
from shared.corpus_io import CorpusFormat, register_format
from shared.corpus_io.conll_reader import read_documents
from shared.corpus_io.sidecar import (
    assemble_corpus,
    file_sidecar,
    read_corpus_sidecar,
    write_corpus_sidecar,
)
from shared.errors import CorpusFormatError
from shared.text_files import read_text, text_lines

SUFFIXES = frozenset({".conll", ".bio", ".iob"})
TOKEN = re.compile(r"[^\W_]+|\S")
_LINE_BREAKING = re.compile(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def tokenize(text: str, cuts: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Token ranges: runs of letters and digits, or any other single non-space character.

    No token crosses an offset in ``cuts``; pass span edges so that every span is a whole
    number of tokens.
    """
    edges = sorted({0, len(text), *cuts})
    return [
        (match.start(), match.end())
        for left, right in itertools.pairwise(edges)
        for match in TOKEN.finditer(text, left, right)
    ]


def iob2_tags(tokens: list[tuple[int, int]], spans: tuple[Span, ...]) -> list[str]:
    """``B-``/``I-``/``O`` per token; spans must be token-aligned (see :func:`tokenize`)."""
    tags = []
    j = 0
    for start, _ in tokens:
        while j < len(spans) and spans[j].end <= start:
            j += 1
        if j < len(spans) and spans[j].start <= start:
            prefix = "B" if start == spans[j].start else "I"
            tags.append(f"{prefix}-{spans[j].label}")
        else:
            tags.append("O")
    return tags


def document_lines(doc: Document) -> Iterator[str]:
    """The lines of one document, ending with a blank line."""
    yield f"# id = {doc.id}"
    if doc.source is not None:
        yield f"# source = {doc.source}"
    if doc.meta:
        yield f"# meta = {json.dumps(doc.meta)}"
    tokens = tokenize(doc.text, (edge for s in doc.spans for edge in (s.start, s.end)))
    lead = doc.text[: tokens[0][0]] if tokens else doc.text
    if lead:
        yield f"# lead = {json.dumps(lead)}"
    tags = iob2_tags(tokens, doc.spans)
    for i, (start, end) in enumerate(tokens):
        gap_end = tokens[i + 1][0] if i + 1 < len(tokens) else len(doc.text)
        gap = doc.text[end:gap_end]
        yield f"{doc.text[start:end]}\t{tags[i]}\t{json.dumps(gap)}"
        if "\n" in gap and i + 1 < len(tokens) and not tags[i + 1].startswith("I-"):
            yield ""
    yield ""


def unwritable(corpus: Corpus) -> list[str]:
    """Everything CoNLL cannot hold losslessly, one message (with the fix) each."""
    problems = []
    for doc in corpus.documents:
        for field, value in (("id", doc.id), ("source", doc.source or "")):
            if _LINE_BREAKING.search(value):
                problems.append(
                    f"document {doc.id!r}: {field} contains a tab or line break; "
                    f"fix: write the {field} on one line without tabs"
                )
        for span in doc.spans:
            surface = doc.surface(span)
            if surface[0].isspace() or surface[-1].isspace():
                problems.append(
                    f"document {doc.id!r}: span [{span.start}, {span.end}) {span.label!r} "
                    "starts or ends with whitespace, which no token can hold; "
                    "fix: trim whitespace from span edges"
                )
    problems += [
        f"label {label!r} contains whitespace; fix: rename it (e.g. with a label mapping)"
        for label in corpus.labels
        if re.search(r"\s", label)
    ]
    return problems


def write_conll(corpus: Corpus, path: Path) -> None:
    """Write an IOB2 file plus ``<file>.provenance.json`` (label set and provenance)."""
    problems = unwritable(corpus)
    if problems:
        raise CorpusFormatError("corpus cannot be written as CoNLL", path=path, problems=problems)
    with atomic_open(path, "w") as handle:
        for doc in corpus.documents:
            handle.write("\n".join(document_lines(doc)) + "\n")
    write_corpus_sidecar(file_sidecar(path), corpus.labels, corpus.provenance)


def read_conll(path: Path) -> Corpus:
    """Read an IOB2 file; every problem is reported at once with its line number."""
    text = read_text(path, what="CoNLL corpus file")
    lines = [line.rstrip("\r\n") for line in text_lines(text)]
    documents, problems = read_documents(path, lines)
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the CoNLL file", path=path, problems=problems
        )
    return assemble_corpus(documents, read_corpus_sidecar(file_sidecar(path)), path)


def _detect(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in SUFFIXES


register_format(
    CorpusFormat(
        name="conll",
        detect=_detect,
        read=read_conll,
        write=write_conll,
        description="IOB2 token file: token, tag, whitespace-after (.conll/.bio/.iob)",
    )
)
