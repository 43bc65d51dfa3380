"""BRAT standoff corpora: a folder of ``<id>.txt`` + ``<id>.ann`` pairs, one document each.

Choices, made explicit:

- Only text-bound annotations (``T1<TAB>LABEL START END<TAB>surface``) become spans. Other
  lines (attributes ``A``, relations ``R``, events ``E``, normalisations ``N``, equivalences
  ``*``, notes ``#``, ``M``) are skipped; how many of each is recorded in the corpus
  provenance notes under ``brat_ignored`` and logged.
- Discontinuous spans (``START END;START END``) are rejected: a :class:`~protocol.Span` is one
  range, and silently joining or splitting fragments would change what was annotated.
- A UTF-8 byte-order mark at the start of a ``.txt`` is stripped and every offset of that
  document shifted by -1, because BRAT counts the BOM as a character (MEDDOCAN ships 32 such
  files). A span that covers the BOM itself is an error.
- The surface string of every ``T`` line must equal ``text[start:end]``; line breaks and tabs
  inside a span are written as spaces (they cannot appear on one ``.ann`` line) and compared
  that way. A ``T`` line without the surface column is accepted unchecked.
- A ``.txt`` without its ``.ann`` (or the reverse) is an error rather than a silently
  unannotated document: a stray file in a corpus folder is more often a mistake.
- ``source``/``meta`` and document order live in ``corpus.meta.jsonl``, label set and
  provenance in ``corpus.provenance.json`` (see :mod:`shared.corpus_io.sidecar`).
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Corpus, Document, Span
from shared.atomic import atomic_directory
from shared.corpus_io import CorpusFormat, register_format
from shared.corpus_io.sidecar import (
    CORPUS_SIDECAR,
    DOCUMENT_SIDECAR,
    assemble_corpus,
    read_corpus_sidecar,
    read_document_sidecar,
    write_corpus_sidecar,
    write_document_sidecar,
)
from shared.errors import CorpusFormatError
from shared.text_files import read_text_file, text_lines
from shared.validation_messages import validation_lines

log = logging.getLogger(__name__)

IGNORED_KINDS = ("A", "R", "E", "N", "M", "*", "#")
_OFFSETS = re.compile(r"^(\d+) (\d+)$")
_UNSAFE_ID = re.compile(r"[/\\\x00\s]|^\.")
_FLAT = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


@dataclass(frozen=True)
class TextBound:
    """One ``T`` line: where it is in the ``.ann`` file and the span it names."""

    line: int
    tid: str
    span: Span


def flat(surface: str) -> str:
    """The surface as one ``.ann`` line can hold it (line breaks and tabs become spaces)."""
    return surface.translate(_FLAT)


def read_text(path: Path) -> tuple[str, int]:
    """The document text (BOM removed) and the offset shift BRAT offsets need (0 or -1)."""
    decoded = read_text_file(path, what="BRAT text file")
    return decoded.text, -1 if decoded.had_bom else 0


def _bom_note(txt: Path, shift: int) -> str:
    if not shift:
        return ""
    return (
        f" (note: {txt.name} starts with a UTF-8 BOM; offsets are read as counting it, as "
        "BRAT does, and shifted by -1; if this .ann does not count it, add 1 to every offset)"
    )


def parse_t_line(
    ann: Path, number: int, line: str, text: str, shift: int, txt: Path
) -> tuple[TextBound | None, str | None]:
    """A text-bound annotation, or the problem with it as ``file:line: message; fix``."""
    where = f"{ann}:{number}"
    fields = line.split("\t", 2)
    if len(fields) < 2:
        return None, (
            f"{where}: text-bound line has {len(fields)} tab-separated field(s); "
            "fix: write 'T1<TAB>LABEL START END<TAB>surface'"
        )
    tid, middle = fields[0], fields[1]
    label, _, offsets = middle.partition(" ")
    if ";" in offsets:
        return None, (
            f"{where}: {tid} has a discontinuous span {offsets!r} ({label}); only continuous "
            "spans are supported; fix: split it into one T line per fragment, or annotate "
            "one continuous range"
        )
    match = _OFFSETS.match(offsets)
    if not label or not match:
        return None, (
            f"{where}: cannot read {middle!r} as 'LABEL START END'; "
            "fix: write the label, then start and end character offsets separated by spaces"
        )
    start, end = int(match[1]) + shift, int(match[2]) + shift
    if start < 0:
        return None, (
            f"{where}: {tid} [{start - shift}, {end - shift}) covers the byte-order mark at "
            f"the start of {txt.name}; fix: start the span after the BOM (offset 1)"
        )
    if not start < end <= len(text):
        return None, (
            f"{where}: {tid} [{start}, {end}) lies outside the text of {txt.name} "
            f"(length {len(text)}){_bom_note(txt, shift)}; "
            "fix: offsets must satisfy 0 <= start < end <= length"
        )
    span = Span(start=start, end=end, label=label)
    if len(fields) == 3 and flat(text[start:end]) != flat(fields[2]):
        return None, (
            f"{where}: {tid} surface {fields[2]!r} differs from the text at "
            f"[{start}, {end}): {text[start:end]!r}{_bom_note(txt, shift)}; "
            "fix: correct the offsets or the surface string"
        )
    return TextBound(number, tid, span), None


def overlap_problems(ann: Path, bounds: list[TextBound]) -> list[str]:
    """One message per pair of overlapping spans, naming both lines."""
    ordered = sorted(bounds, key=lambda b: (b.span.start, b.span.end))
    problems = []
    for left, right in itertools.pairwise(ordered):
        if right.span.start < left.span.end:
            problems.append(
                f"{ann}:{right.line}: {right.tid} [{right.span.start}, {right.span.end}) "
                f"overlaps {left.tid} [{left.span.start}, {left.span.end}) on line "
                f"{left.line}; fix: keep one of them so that no character has two labels"
            )
    return problems


def read_pair(
    txt: Path, ann: Path, extra: dict[str, Any] | None = None
) -> tuple[Document | None, list[str], Counter[str]]:
    """The document of one ``.txt``/``.ann`` pair, its problems, and skipped line kinds.

    ``extra`` holds the ``source``/``meta`` recorded for it in the document sidecar.
    """
    text, shift = read_text(txt)
    bounds: list[TextBound] = []
    problems: list[str] = []
    ignored: Counter[str] = Counter()
    annotations = read_text_file(ann, what="BRAT .ann file").text
    for number, raw in enumerate(text_lines(annotations), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("T"):
            bound, problem = parse_t_line(ann, number, line, text, shift, txt)
            bounds.extend([bound] if bound else [])
            problems.extend([problem] if problem else [])
        elif line.startswith(IGNORED_KINDS):
            ignored[line[0]] += 1
        else:
            problems.append(
                f"{ann}:{number}: unrecognised line {line[:40]!r}; fix: BRAT lines start "
                f"with an id whose first letter is T (text-bound) or one of {IGNORED_KINDS}"
            )
    problems.extend(overlap_problems(ann, bounds))
    if problems:
        return None, problems, ignored
    spans = tuple(b.span for b in bounds)
    try:
        return Document(id=txt.stem, text=text, spans=spans, **(extra or {})), [], ignored
    except ValidationError as exc:
        return None, [f"{ann}: {line}" for line in validation_lines(exc)], ignored


def pair_files(folder: Path) -> tuple[list[tuple[Path, Path]], list[str]]:
    """Matching ``.txt``/``.ann`` pairs by stem, and a problem for every unmatched file."""
    anns = {p.stem: p for p in folder.glob("*.ann")}
    txts = {p.stem: p for p in folder.glob("*.txt")}
    problems = [
        f"{anns[stem]}: no matching {stem}.txt; fix: put the document text beside it as "
        f"{stem}.txt or remove the .ann"
        for stem in sorted(anns.keys() - txts.keys())
    ]
    problems += [
        f"{txts[stem]}: no matching {stem}.ann; fix: add an empty {stem}.ann if it is a "
        "document without annotations, or move the file out of the corpus folder"
        for stem in sorted(txts.keys() - anns.keys())
    ]
    pairs = [(txts[stem], anns[stem]) for stem in sorted(anns.keys() & txts.keys())]
    return pairs, problems


def _ordered(pairs: list[tuple[Path, Path]], recorded: list[str]) -> list[tuple[Path, Path]]:
    """Pairs in the order the document sidecar recorded, then the rest by id."""
    rank = {doc_id: i for i, doc_id in enumerate(recorded)}
    return sorted(pairs, key=lambda pair: (rank.get(pair[0].stem, len(rank)), pair[0].stem))


def read_brat(folder: Path) -> Corpus:
    """Read a BRAT folder; every problem in every file is reported at once."""
    pairs, problems = pair_files(folder)
    recorded = read_document_sidecar(folder / DOCUMENT_SIDECAR)
    documents: list[Document] = []
    ignored: Counter[str] = Counter()
    for txt, ann in _ordered(pairs, list(recorded)):
        doc, found, skipped = read_pair(txt, ann, recorded.get(txt.stem))
        problems.extend(found)
        ignored.update(skipped)
        if doc is not None:
            documents.append(doc)
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the BRAT corpus", path=folder, problems=problems
        )
    extra = read_corpus_sidecar(folder / CORPUS_SIDECAR)
    corpus = assemble_corpus(documents, extra, folder)
    if not ignored:
        return corpus
    note = ", ".join(f"{kind}: {n}" for kind, n in sorted(ignored.items()))
    log.warning("%s: skipped non-text-bound BRAT annotations (%s)", folder, note)
    notes = {**corpus.provenance.notes, "brat_ignored": f"{note} (only T lines are read)"}
    provenance = corpus.provenance.model_copy(update={"notes": notes})
    return corpus.model_copy(update={"provenance": provenance})


def ann_text(doc: Document) -> str:
    """The ``.ann`` content of one document: one ``T`` line per span."""
    return "".join(
        f"T{i}\t{s.label} {s.start} {s.end}\t{flat(doc.surface(s))}\n"
        for i, s in enumerate(doc.spans, start=1)
    )


def unwritable(corpus: Corpus) -> list[str]:
    """Ids that cannot be file names and labels that cannot be BRAT types."""
    problems = [
        f"document id {doc.id!r} cannot be a file name; fix: use ids without '/', '\\', "
        "whitespace or a leading '.'"
        for doc in corpus.documents
        if _UNSAFE_ID.search(doc.id)
    ]
    problems += [
        f"label {label!r} contains whitespace, which BRAT cannot store; fix: rename it "
        "(e.g. with a label mapping)"
        for label in corpus.labels
        if re.search(r"\s", label)
    ]
    return problems


def write_brat(corpus: Corpus, folder: Path) -> None:
    """Write one ``.txt``/``.ann`` pair per document; the folder appears complete or not."""
    problems = unwritable(corpus)
    if problems:
        raise CorpusFormatError("corpus cannot be written as BRAT", path=folder, problems=problems)
    with atomic_directory(folder) as tmp:
        for doc in corpus.documents:
            (tmp / f"{doc.id}.txt").write_text(doc.text, encoding="utf-8", newline="")
            (tmp / f"{doc.id}.ann").write_text(ann_text(doc), encoding="utf-8", newline="")
        write_document_sidecar(tmp / DOCUMENT_SIDECAR, corpus.documents)
        write_corpus_sidecar(tmp / CORPUS_SIDECAR, corpus.labels, corpus.provenance)


def _detect(path: Path) -> bool:
    return path.is_dir() and any(path.glob("*.ann"))


register_format(
    CorpusFormat(
        name="brat",
        detect=_detect,
        read=read_brat,
        write=write_brat,
        description="folder of BRAT standoff .txt/.ann pairs (text-bound annotations)",
    )
)
