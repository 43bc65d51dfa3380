"""The real reference of the audit and the export gate: every real note the generator saw.

The generator is adapted on the training notes (the canaries' carriers among them) and
prompted with the openings of validation notes, and an exported note is prompt +
continuation. So the audit compares the synthetic corpus with both splits, and the gate
re-derives the same reference from the same two files; the test split never reaches the
generator and is not in it.
"""

from __future__ import annotations

from pathlib import Path

from protocol import Corpus
from shared.corpus_io import read_corpus


def generator_reference(train: Corpus, validation: Corpus | None) -> Corpus:
    """The training notes, then the validation notes (ids are unique across splits)."""
    if validation is None or not validation.documents:
        return train
    return Corpus(documents=(*train.documents, *validation.documents))


def read_generator_reference(train: Path, validation: Path | None) -> Corpus:
    """:func:`generator_reference` of the two split files."""
    return generator_reference(
        read_corpus(train), read_corpus(validation) if validation is not None else None
    )
