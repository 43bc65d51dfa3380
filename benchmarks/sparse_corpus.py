"""Sparse-PHI corpora: cut from MEDDOCAN (``benchmarks/annotator.py --sparse``) or written in
English from the demo generator (issue 29's English proof).

MEDDOCAN notes are dense (about 11% of words inside an entity, every note holds PHI). Cut
into short pieces (span-safe word chunks), they become "notes" of which some hold PHI and
most do not. The *dense* corpus keeps ``phi_pieces`` PHI-bearing pieces with the PHI-free
pieces of the same notes (MEDDOCAN's own mix); the *sparse* corpus keeps the very same
PHI-bearing pieces (equal PHI mentions) among enough PHI-free pieces of other notes that PHI
words are at most ``density`` of all words and at least ``free_share`` of notes hold none.

The English corpus (:func:`english_sparse`) is made of the demo generator's lines: every note
is 10-18 sentences without PHI (clinical findings, plans), and ``phi_share`` of the notes also
hold one line with PHI (a name, a date, an address...) at a random place; so most notes hold
none and PHI words stay under 1%, like a ward's progress notes. Write one with

    python benchmarks/sparse_corpus.py --english 400 --out runs/sparse-en/corpus.jsonl

``--label-case mixed`` writes its labels as a hospital's annotators might (``Date``,
``Location``, ``PhoneNumber``; issue 46), ``lower`` in lower case; the notes are the same.
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from pathlib import Path

from protocol import Corpus, Document, Span
from shared.ner_tokens import chunk_document, split_words


def pieces(corpus: Corpus, words: int) -> list[Document]:
    """Every note cut into span-safe pieces of at most ``words`` words, each its own note."""
    out = []
    for doc in corpus.documents:
        for index, chunk in enumerate(chunk_document(doc.text, doc.spans, words)):
            if split_words(chunk.text):
                out.append(
                    Document(
                        id=f"{doc.id}#{index}", text=chunk.text, spans=chunk.spans, source=doc.id
                    )
                )
    return out


def phi_words(docs: list[Document]) -> int:
    return sum(len(split_words(d.text[s.start : s.end])) for d in docs for s in d.spans)


def all_words(docs: list[Document]) -> int:
    return sum(len(split_words(d.text)) for d in docs)


@dataclass(frozen=True)
class SparsePair:
    """A dense and a sparse training corpus holding the same PHI-bearing pieces."""

    dense: Corpus
    sparse: Corpus


def _corpus(docs: list[Document], labels: tuple[str, ...], rng: random.Random) -> Corpus:
    docs = list(docs)
    rng.shuffle(docs)
    return Corpus(documents=tuple(docs), labels=labels)


def sparse_pair(
    corpus: Corpus,
    phi_pieces: int,
    *,
    words: int = 32,
    density: float = 0.01,
    free_share: float = 0.7,
    seed: int = 0,
) -> SparsePair:
    """Dense and sparse corpora with the same ``phi_pieces`` PHI-bearing pieces."""
    rng = random.Random(seed)
    notes = list(corpus.documents)
    rng.shuffle(notes)
    cut = pieces(Corpus(documents=tuple(notes), labels=corpus.labels), words)
    phi = [p for p in cut if p.spans][:phi_pieces]
    sources = {p.source for p in phi}
    dense_free = [p for p in cut if not p.spans and p.source in sources]
    other_free = [p for p in cut if not p.spans and p.source not in sources]
    rng.shuffle(other_free)
    free: list[Document] = []
    target_words = phi_words(phi) / density
    for piece in other_free:
        enough_words = all_words(phi) + all_words(free) >= target_words
        enough_notes = len(free) >= free_share / (1 - free_share) * len(phi)
        if enough_words and enough_notes:
            break
        free.append(piece)
    return SparsePair(
        dense=_corpus(phi + dense_free, corpus.labels, rng),
        sparse=_corpus(phi + free, corpus.labels, rng),
    )


def describe(corpus: Corpus) -> str:
    docs = list(corpus.documents)
    with_phi = sum(bool(d.spans) for d in docs)
    mentions = sum(len(d.spans) for d in docs)
    return (
        f"{len(docs)} notes, {1 - with_phi / len(docs):.0%} without PHI, {mentions} mentions, "
        f"{phi_words(docs) / all_words(docs):.2%} PHI words"
    )


CLINICAL = (
    "Observations were stable overnight.",
    "Blood pressure was within the normal range.",
    "Oxygen saturation remained above 94% on room air.",
    "The wound was clean and dry.",
    "Bowels opened and the patient is eating and drinking.",
    "Pain is controlled with regular paracetamol.",
    "Physiotherapy reviewed mobility and advised a frame.",
    "Bloods showed a mild rise in creatinine.",
    "Fluids were encouraged and a repeat renal profile is planned.",
    "Antibiotics were switched to oral after 48 hours.",
    "The cannula was removed and the site is clean.",
    "Blood glucose readings ranged from 6 to 11 mmol/L.",
    "No new neurological deficit was found on examination.",
    "Chest was clear on auscultation.",
    "Abdomen was soft and non-tender.",
    "Heart sounds were normal with no added sounds.",
    "The plan was discussed and the patient agreed.",
    "Continue current medication and review tomorrow.",
    "Occupational therapy assessed the home situation.",
    "A dietitian review was requested.",
    "Falls risk assessment was completed.",
    "Skin integrity was checked and no pressure damage was found.",
    "Temperature settled without antipyretics.",
    "Urine output was adequate.",
    "The patient slept well and had no complaints.",
    "Inhaler technique was reviewed and corrected.",
    "Anticoagulation was continued at the current dose.",
    "A repeat chest X-ray is planned in six weeks.",
    "Mobilising independently on the ward.",
    "Medically fit for discharge pending social care.",
)
"""PHI-free sentences added to the demo generator's own (which are few)."""

_SENTENCE = re.compile(r"[^.\n]+(?:\.(?!\d)[^.\n]*)*?\.(?=\s|$)|[^.\n]+$", re.M)


def _lines(rows: list[dict[str, object]]) -> tuple[list[Document], list[Document]]:
    """The demo notes' sentences, each a document with its spans: (without PHI, with PHI)."""
    free: list[Document] = []
    phi: list[Document] = []
    for row in rows:
        text = str(row["text"])
        spans = [Span.model_validate(s) for s in row["spans"]]  # type: ignore[attr-defined]
        for found in _SENTENCE.finditer(text):
            line, end = found.group(), found.end()
            start = end - len(line.lstrip())
            line = line.lstrip()
            inside = tuple(
                Span(start=s.start - start, end=s.end - start, label=s.label)
                for s in spans
                if s.start >= start and s.end <= end
            )
            crosses = any(s.start < end and s.end > start for s in spans)
            if inside:
                phi.append(Document(id="l", text=line, spans=inside))
            elif not crosses:
                free.append(Document(id="l", text=line))
    return free, phi


def english_sparse(
    notes: int = 400,
    *,
    phi_share: float = 0.25,
    lines: tuple[int, int] = (10, 18),
    seed: int = 29,
    style: str = "ward",
) -> Corpus:
    """``notes`` English notes, ``phi_share`` of them with one PHI-bearing line."""
    from site_agent.demo.make_demo_corpus import build_corpus

    rng = random.Random(seed)
    free, phi = _lines(build_corpus(max(200, notes), seed, style, style))
    letters, _ = _lines(build_corpus(200, seed, "letter", style))
    unique_free = sorted({d.text.strip() for d in free + letters} | set(CLINICAL))
    docs = []
    for index in range(notes):
        count = min(len(unique_free), rng.randint(*lines))
        body = [Document(id="l", text=t) for t in rng.sample(unique_free, count)]
        if rng.random() < phi_share:
            body.insert(rng.randrange(len(body) + 1), rng.choice(phi))
        text, spans, cursor = [], [], 0
        for line in body:
            spans += [
                Span(start=s.start + cursor, end=s.end + cursor, label=s.label) for s in line.spans
            ]
            text.append(line.text)
            cursor += len(line.text) + 1
        docs.append(Document(id=f"sparse-en-{index:04d}", text="\n".join(text), spans=tuple(spans)))
    labels = tuple(sorted({s.label for d in docs for s in d.spans}))
    return Corpus(documents=tuple(docs), labels=labels)


LABEL_CASES = {
    "upper": str.upper,
    "mixed": lambda label: "".join(word.capitalize() for word in label.split("_")),
    "lower": str.lower,
}
"""How ``--label-case`` writes a label (the demo's labels are upper case)."""


def with_label_case(corpus: Corpus, case: str) -> Corpus:
    """``corpus`` with every label written in ``case`` (``LABEL_CASES``)."""
    write = LABEL_CASES[case]
    docs = tuple(
        d.model_copy(
            update={"spans": tuple(s.model_copy(update={"label": write(s.label)}) for s in d.spans)}
        )
        for d in corpus.documents
    )
    return Corpus(documents=docs, labels=tuple(sorted({write(label) for label in corpus.labels})))


def main() -> None:
    parser = argparse.ArgumentParser(description="write an English sparse-PHI corpus")
    parser.add_argument("--english", type=int, default=400, help="notes")
    parser.add_argument("--phi-share", type=float, default=0.25, help="share of notes with PHI")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--out", type=Path, required=True, help="a .jsonl file")
    parser.add_argument(
        "--label-case", choices=sorted(LABEL_CASES), default="upper", help="how labels are written"
    )
    args = parser.parse_args()
    from shared.corpus_io import write_corpus

    corpus = english_sparse(args.english, phi_share=args.phi_share, seed=args.seed)
    corpus = with_label_case(corpus, args.label_case)
    write_corpus(corpus, args.out)
    print(f"{args.out}: {describe(corpus)}")


if __name__ == "__main__":
    main()
