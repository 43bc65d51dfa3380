"""BRAT standoff: reading, writing, and every rejected input with the message it produces."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import detect_format, read_corpus, write_corpus
from shared.errors import CorpusFormatError

TEXT = "Juan vive en Madrid.\nTel: 555 1234."


def brat_folder(root: Path, files: dict[str, str | bytes]) -> Path:
    folder = root / "brat"
    folder.mkdir()
    for name, content in files.items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content, encoding="utf-8", newline="")
    return folder


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(CorpusFormatError) as info:
        read_corpus(folder, "brat")
    assert info.value.exit_code == 65
    return info.value.problems


def test_reads_text_bound_spans_and_detects_the_folder(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path,
        {
            "d1.txt": TEXT,
            "d1.ann": "T1\tPER 0 4\tJuan\nT2\tLOC 13 19\tMadrid\n",
        },
    )
    assert detect_format(folder) == "brat"
    corpus = read_corpus(folder)
    (doc,) = corpus.documents
    assert doc.id == "d1"
    assert [(doc.surface(s), s.label) for s in doc.spans] == [("Juan", "PER"), ("Madrid", "LOC")]
    assert corpus.labels == ("LOC", "PER")


def test_bom_is_stripped_and_offsets_shifted_by_one(tmp_path: Path) -> None:
    # BRAT counts the BOM as character 0, so "Juan" sits at [1, 5) in the original offsets.
    folder = brat_folder(
        tmp_path,
        {"d1.txt": "\ufeff" + TEXT, "d1.ann": "T1\tPER 1 5\tJuan\nT2\tLOC 14 20\tMadrid\n"},
    )
    (doc,) = read_corpus(folder).documents
    assert doc.text == TEXT
    assert [(s.start, s.end) for s in doc.spans] == [(0, 4), (13, 19)]


def test_span_over_the_bom_is_rejected(tmp_path: Path) -> None:
    folder = brat_folder(tmp_path, {"d1.txt": "\ufeff" + TEXT, "d1.ann": "T1\tPER 0 5\tJuan\n"})
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}:1: T1 [0, 5) covers the byte-order mark at the start of d1.txt; "
        "fix: start the span after the BOM (offset 1)"
    ]


def test_bom_file_whose_offsets_ignore_the_bom_gets_a_hint(tmp_path: Path) -> None:
    folder = brat_folder(tmp_path, {"d1.txt": "\ufeff" + TEXT, "d1.ann": "T1\tLOC 13 19\tMadrid\n"})
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}:1: T1 surface 'Madrid' differs from the text at [12, 18): "
        "' Madri' (note: d1.txt starts with a UTF-8 BOM; offsets are read as counting it, as "
        "BRAT does, and shifted by -1; if this .ann does not count it, add 1 to every offset); "
        "fix: correct the offsets or the surface string"
    ]


def test_discontinuous_span_is_rejected(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path, {"d1.txt": TEXT, "d1.ann": "T1\tPER 0 4\tJuan\nT2\tLOC 0 4;13 19\tJuan Madrid\n"}
    )
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}:2: T2 has a discontinuous span '0 4;13 19' (LOC); only "
        "continuous spans are supported; fix: split it into one T line per fragment, or "
        "annotate one continuous range"
    ]


def test_surface_mismatch_names_file_and_line(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path, {"d1.txt": TEXT, "d1.ann": "T1\tPER 0 4\tJuan\nT2\tLOC 13 19\tMadrd\n"}
    )
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}:2: T2 surface 'Madrd' differs from the text at [13, 19): "
        "'Madrid'; fix: correct the offsets or the surface string"
    ]


def test_missing_txt_and_missing_ann_are_both_reported(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path, {"d1.ann": "T1\tPER 0 4\tJuan\n", "d2.txt": TEXT, "d2.ann": "", "d3.txt": TEXT}
    )
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}: no matching d1.txt; fix: put the document text beside it as "
        "d1.txt or remove the .ann",
        f"{folder / 'd3.txt'}: no matching d3.ann; fix: add an empty d3.ann if it is a "
        "document without annotations, or move the file out of the corpus folder",
    ]


@pytest.mark.parametrize(
    ("ann", "message"),
    [
        (
            "T1\tPER 0 40\tJuan\n",
            "T1 [0, 40) lies outside the text of d1.txt (length 35); "
            "fix: offsets must satisfy 0 <= start < end <= length",
        ),
        (
            "T1\tPER zero 4\tJuan\n",
            "cannot read 'PER zero 4' as 'LABEL START END'; "
            "fix: write the label, then start and end character offsets separated by spaces",
        ),
        (
            "T1 PER 0 4 Juan\n",
            "text-bound line has 1 tab-separated field(s); "
            "fix: write 'T1<TAB>LABEL START END<TAB>surface'",
        ),
        (
            "X1\tfoo\n",
            "unrecognised line 'X1\\tfoo'; fix: BRAT lines start with an id whose first letter "
            "is T (text-bound) or one of ('A', 'R', 'E', 'N', 'M', '*', '#')",
        ),
    ],
)
def test_malformed_lines(tmp_path: Path, ann: str, message: str) -> None:
    folder = brat_folder(tmp_path, {"d1.txt": TEXT, "d1.ann": ann})
    assert problems_of(folder) == [f"{folder / 'd1.ann'}:1: {message}"]


def test_overlapping_spans_name_both_lines(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path, {"d1.txt": TEXT, "d1.ann": "T1\tPER 0 9\tJuan vive\nT2\tPER 5 9\tvive\n"}
    )
    assert problems_of(folder) == [
        f"{folder / 'd1.ann'}:2: T2 [5, 9) overlaps T1 [0, 9) on line 1; "
        "fix: keep one of them so that no character has two labels"
    ]


def test_other_annotation_kinds_are_skipped_with_a_note(tmp_path: Path) -> None:
    folder = brat_folder(
        tmp_path,
        {
            "d1.txt": TEXT,
            "d1.ann": "T1\tPER 0 4\tJuan\nA1\tNegated T1\n#1\tAnnotatorNotes T1\tok\n"
            "R1\tLives Arg1:T1 Arg2:T1\n#2\tAnnotatorNotes T1\tx\n",
        },
    )
    corpus = read_corpus(folder)
    assert len(corpus.documents[0].spans) == 1
    assert corpus.provenance.notes["brat_ignored"] == "#: 2, A: 1, R: 1 (only T lines are read)"


def test_round_trip_keeps_order_source_meta_labels_and_line_breaks(tmp_path: Path) -> None:
    docs = (
        Document(id="z", text="a\r\nJuan\nPérez b", spans=[Span(start=3, end=13, label="PER")]),
        Document(id="a", text="", source="site-1", meta={"split": "test", "k": [1, 2]}),
    )
    corpus = Corpus(documents=docs, labels=("LOC", "PER"))
    write_corpus(corpus, tmp_path / "out", "brat")
    ann = (tmp_path / "out" / "z.ann").read_text(encoding="utf-8")
    assert ann == "T1\tPER 3 13\tJuan Pérez\n"  # the line break is a space on the .ann line
    assert read_corpus(tmp_path / "out") == corpus


def test_write_replaces_the_folder_only_when_complete(tmp_path: Path) -> None:
    good = Corpus(documents=(Document(id="d1", text=TEXT),))
    write_corpus(good, tmp_path / "out", "brat")
    bad = Corpus(documents=(Document(id="../escape", text=TEXT),))
    with pytest.raises(CorpusFormatError) as info:
        write_corpus(bad, tmp_path / "out", "brat")
    assert info.value.problems == [
        "document id '../escape' cannot be a file name; "
        "fix: use ids without '/', '\\', whitespace or a leading '.'"
    ]
    assert read_corpus(tmp_path / "out") == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
