"""CoNLL IOB2 files: tokenization, lossless round trips, foreign layouts, rejected input."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import detect_format, read_corpus, write_corpus
from shared.corpus_io.conll import tokenize
from shared.errors import CorpusFormatError


def spans(doc: Document) -> list[tuple[str, str]]:
    return [(doc.surface(s), s.label) for s in doc.spans]


def write_lines(tmp_path: Path, lines: list[str], name: str = "c.conll") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(CorpusFormatError) as info:
        read_corpus(path)
    return info.value.problems


def test_tokenizer_splits_words_numbers_punctuation_and_at_cuts() -> None:
    text = "NHC: 368503-B, Dra.Pérez"
    words = [text[a:b] for a, b in tokenize(text)]
    assert words == ["NHC", ":", "368503", "-", "B", ",", "Dra", ".", "Pérez"]
    assert [text[a:b] for a, b in tokenize(text, [8, 24])] == [
        "NHC", ":", "368", "503", "-", "B", ",", "Dra", ".", "Pérez",
    ]  # fmt: skip


def test_spans_inside_tokens_are_split_out_and_round_trip(tmp_path: Path) -> None:
    doc = Document(
        id="d1",
        text="  Paciente:JuanPérez, 70años\r\n\n\tTel.\u00a0555",
        spans=[
            Span(start=11, end=15, label="PER"),
            Span(start=15, end=20, label="PER"),
            Span(start=22, end=24, label="AGE"),
            Span(start=37, end=40, label="PHONE"),
        ],
        source="site-a",
        meta={"split": "train", "a": [1]},
    )
    corpus = Corpus(documents=(doc, Document(id="empty", text="")), labels=("AGE", "PER", "PHONE"))
    path = tmp_path / "c.conll"
    write_corpus(corpus, path, "conll")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:8] == [
        "# id = d1",
        "# source = site-a",
        '# meta = {"split": "train", "a": [1]}',
        '# lead = "  "',
        'Paciente\tO\t""',
        ':\tO\t""',
        'Juan\tB-PER\t""',
        'Pérez\tB-PER\t""',
    ]
    assert read_corpus(path) == corpus
    first = path.read_bytes()
    write_corpus(read_corpus(path), path, "conll")
    assert path.read_bytes() == first  # conll -> spans -> conll is exact


def test_sentence_breaks_follow_line_breaks_but_never_split_a_span(tmp_path: Path) -> None:
    doc = Document(id="d", text="Vive en\nMadrid.\nBien", spans=[Span(start=5, end=14, label="X")])
    write_corpus(Corpus(documents=(doc,)), tmp_path / "c.conll", "conll")
    text = (tmp_path / "c.conll").read_text(encoding="utf-8")
    assert text == (
        '# id = d\nVive\tO\t" "\nen\tB-X\t"\\n"\nMadrid\tI-X\t""\n.\tO\t"\\n"\n\nBien\tO\t""\n\n'
    )
    assert read_corpus(tmp_path / "c.conll").documents == (doc,)


@pytest.mark.parametrize("suffix", [".conll", ".bio", ".iob"])
def test_detected_by_suffix(tmp_path: Path, suffix: str) -> None:
    path = write_lines(tmp_path, ["Juan\tB-PER"], "x" + suffix)
    assert detect_format(path) == "conll"


def test_foreign_two_column_blocks_become_documents(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        ["Juan B-PER", "Pérez I-PER", "vive O", "", "en\tO", "La\tB-LOC", "Paz\tI-LOC"],
        "sents.bio",
    )
    corpus = read_corpus(path)
    assert [(d.id, d.text) for d in corpus.documents] == [
        ("sents-1", "Juan Pérez vive"),
        ("sents-2", "en La Paz"),
    ]
    assert [spans(d) for d in corpus.documents] == [[("Juan Pérez", "PER")], [("La Paz", "LOC")]]


def test_docstart_documents_join_sentences_with_line_breaks(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        [
            "-DOCSTART- -X- O",
            "",
            "Juan\tB-PER",
            ".\tO",
            "",
            "Bien\tO",
            "-DOCSTART-",
            "# id = n2",
            "Ana\tB-PER",
        ],
    )
    corpus = read_corpus(path)
    assert [(d.id, d.text) for d in corpus.documents] == [("c-1", "Juan .\nBien"), ("n2", "Ana")]
    assert spans(corpus.documents[1]) == [("Ana", "PER")]


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (
            ["# id = d", "Juan\tB_PER"],
            2,
            "tag 'B_PER' is not O, B-<label> or I-<label>; "
            "fix: use IOB2 tags (B- starts an entity, I- continues it, O is outside)",
        ),
        (
            ["# id = d", "Juan\tO", "Pérez\tI-PER"],
            3,
            "tag 'I-PER' follows 'O', so no PER entity is open (IOB2); "
            "fix: start the entity with 'B-PER'",
        ),
        (
            ["# id = d", "Juan\tB-LOC", "Pérez\tI-PER"],
            3,
            "tag 'I-PER' follows 'B-LOC', so no PER entity is open (IOB2); "
            "fix: start the entity with 'B-PER'",
        ),
        (
            ["# id = d", "Juan\tB-PER", "", "Pérez\tI-PER"],
            4,
            "tag 'I-PER' follows the sentence start, so no PER entity is open (IOB2); "
            "fix: start the entity with 'B-PER'",
        ),
        (
            ["# id = d", "Juan\tNNP\tB-NP\tB-PER"],
            2,
            "expected 2 or 3 tab-separated columns (token, tag, optional whitespace after as "
            "JSON), found 4; fix: write 'token<TAB>tag' lines",
        ),
        (
            ["# id = d", "Juan"],
            2,
            "expected 2 or 3 tab-separated columns (token, tag, optional whitespace after as "
            "JSON), found 1; fix: write 'token<TAB>tag' lines",
        ),
        (
            ["# id = d", 'Juan\tO\t"x"'],
            2,
            "third column '\"x\"' is not a JSON string of whitespace; "
            'fix: write the whitespace after the token, e.g. " " or "\\n" or ""',
        ),
        (
            ["# id = d", "# meta = [1]"],
            2,
            "'# meta =' is not a JSON object; fix: write '# meta = {...}'",
        ),
        (
            ["# id = d", "Juan\tO", '# lead = " "'],
            3,
            "'# lead =' must be a JSON string of whitespace before the first token; "
            "fix: write e.g. '# lead = \"\\n\"' above the tokens of the document",
        ),
    ],
)
def test_rejected_lines_name_file_line_and_fix(
    tmp_path: Path, lines: list[str], line: int, message: str
) -> None:
    path = write_lines(tmp_path, lines)
    assert problems_of(path) == [f"{path}:{line}: {message}"]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write_lines(tmp_path, ["# id = a", "x\tI-A", "# id = a", "y\tQ"])
    assert problems_of(path) == [
        f"{path}:2: tag 'I-A' follows the sentence start, so no A entity is open (IOB2); "
        "fix: start the entity with 'B-A'",
        f"{path}:4: tag 'Q' is not O, B-<label> or I-<label>; "
        "fix: use IOB2 tags (B- starts an entity, I- continues it, O is outside)",
    ]


def test_duplicate_ids_are_a_corpus_problem(tmp_path: Path) -> None:
    path = write_lines(tmp_path, ["# id = a", "x\tO", "# id = a", "y\tO"])
    with pytest.raises(CorpusFormatError, match="duplicate document id 'a' at documents 1, 2"):
        read_corpus(path)


def test_unwritable_corpus_is_refused_before_writing(tmp_path: Path) -> None:
    corpus = Corpus(
        documents=(
            Document(id="a\nb", text="x"),
            Document(id="c", text="Juan  vive", spans=[Span(start=0, end=5, label="PER")]),
        )
    )
    with pytest.raises(CorpusFormatError) as info:
        write_corpus(corpus, tmp_path / "c.conll", "conll")
    assert info.value.problems == [
        "document 'a\\nb': id contains a tab or line break; "
        "fix: write the id on one line without tabs",
        "document 'c': span [0, 5) 'PER' starts or ends with whitespace, which no token can "
        "hold; fix: trim whitespace from span edges",
    ]
    assert not (tmp_path / "c.conll").exists()


def test_label_names_are_data_and_lose_their_iob2_prefix_once(tmp_path: Path) -> None:
    """Issue 46: mixed case, hyphens, dots, digits and non-ASCII letters stay as written; a
    label that itself starts with ``B-`` keeps it (only the tag's own prefix goes)."""
    path = write_lines(
        tmp_path,
        ["Juan\tB-DoctorName", "Pérez\tI-DoctorName", "el\tO", "3/4\tB-fecha.alta",
         "en\tO", "Ávila\tB-Lugar-2", "y\tO", "X\tB-B-ref", "9\tB-Název"],
        "labels.bio",
    )  # fmt: skip
    (doc,) = read_corpus(path).documents
    assert spans(doc) == [
        ("Juan Pérez", "DoctorName"),
        ("3/4", "fecha.alta"),
        ("Ávila", "Lugar-2"),
        ("X", "B-ref"),
        ("9", "Název"),
    ]
