"""Corpus diagnostics on a hand-made corpus with known values; diversity against NLTK."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nltk.stem.snowball import SnowballStemmer

from shared.corpus_io import read_corpus
from shared.errors import UsageError
from shared.metrics.diagnostics import corpus_diagnostics, is_person_label
from shared.metrics.diversity import guess_language, lexical_diversity, resolve_language
from tests.shared.metrics.builders import corpus, doc

HAND = corpus(
    doc([(0, 4, "NOMBRE_SUJETO"), (13, 19, "LOC"), (24, 28, "NOMBRE_SUJETO")], "d1",
        "Juan vive en Madrid con Juan."),
    doc([], "d2", "Sin datos."),
    doc([(6, 10, "FECHA"), (13, 17, "FECHA")], "d3", "Fecha 2020 y 2021."),
    doc([(5, 8, "NOMBRE_PERSONAL"), (12, 15, "NOMBRE_PERSONAL")], "d4", "Dra. ANA  y ana."),
)  # fmt: skip


def test_hand_corpus_diagnostics() -> None:
    d = corpus_diagnostics(HAND, language="spanish")
    assert (d.n_documents, d.n_spans, d.n_pii_documents) == (4, 7, 3)
    assert d.pii_document_share == 0.75
    assert (d.words.median, d.words.q1, d.words.q3, d.words.mean) == (4, 3.5, 4.5, 4)
    assert (d.chars.median, d.chars.q1, d.chars.q3) == (17, 14.5, 20.75)
    assert (d.chars.minimum, d.chars.maximum) == (10, 29)
    assert (d.spans_per_document.median, d.spans_per_document.mean) == (2, 1.75)
    assert (d.spans_per_pii_document.q1, d.spans_per_pii_document.q3) == (2, 2.5)
    assert {k: v.spans for k, v in d.labels.items()} == {
        "FECHA": 2, "LOC": 1, "NOMBRE_PERSONAL": 2, "NOMBRE_SUJETO": 2
    }  # fmt: skip
    assert d.labels["LOC"].span_share == pytest.approx(1 / 7)
    assert d.labels["FECHA"].pii_document_share == pytest.approx(1 / 3)
    assert d.person_labels == ("NOMBRE_PERSONAL", "NOMBRE_SUJETO")
    assert d.pii_documents_without_person_share == pytest.approx(1 / 3)  # d3: dates only
    # d1 repeats "Juan"; d4 repeats "ANA"/"ana" (case-insensitive); d3's dates differ
    assert d.pii_documents_with_repetition_share == pytest.approx(2 / 3)
    assert d.language == "spanish"
    assert d.n_word_tokens == 14  # letters only: "2020", "2021" are not words


def test_person_labels_can_be_given() -> None:
    d = corpus_diagnostics(HAND, person_labels=["LOC"], diversity=False)
    assert d.person_labels == ("LOC",)
    assert d.pii_documents_without_person_share == pytest.approx(2 / 3)
    assert d.lexical_diversity is None


def test_empty_corpus_diagnostics_are_zero() -> None:
    d = corpus_diagnostics(corpus())
    assert (d.n_documents, d.pii_document_share, d.words.median) == (0, 0.0, 0.0)
    assert d.lexical_diversity is None


@pytest.mark.parametrize(
    ("label", "is_person"),
    [
        ("PER", True),
        ("NOMBRE_SUJETO_ASISTENCIA", True),
        ("NOMBRE_PERSONAL_SANITARIO", True),
        ("First_Name", True),
        ("person", True),
        ("ID_TITULACION_PERSONAL_SANITARIO", False),
        ("PERIOD", False),
        ("LOC", False),
        ("FECHAS", False),
    ],
)
def test_person_label_heuristic(label: str, is_person: bool) -> None:
    assert is_person_label(label) is is_person


def direct_diversity(texts: list[str], language: str) -> tuple[float, float]:
    stemmer = SnowballStemmer(language)
    per_doc = []
    every: list[str] = []
    for text in texts:
        stems = [stemmer.stem(w.lower()) for w in re.findall(r"[^\W\d_]+", text)]
        if stems:
            per_doc.append(len(set(stems)) / len(stems))
        every.extend(stems)
    return len(set(every)) / len(every), sum(per_doc) / len(per_doc)


def test_diversity_matches_direct_nltk_computation() -> None:
    texts = [
        "Los pacientes y el paciente presentaban dolores; el dolor cedió.",
        "Paciente de 70 años con dolor abdominal y fiebre.",
        "",
        "12/03/2016",
    ]
    got = lexical_diversity(texts, "es")
    corpus_level, per_document = direct_diversity(texts, "spanish")
    assert got.corpus == pytest.approx(corpus_level)
    assert got.mean_document == pytest.approx(per_document)
    assert got.n_tokens == 18


def test_diversity_on_meddocan_matches_nltk(meddocan_dir: Path) -> None:
    texts = [d.text for d in read_corpus(meddocan_dir / "dev.jsonl").documents[:15]]
    got = lexical_diversity(texts, "spanish")
    assert (got.corpus, got.mean_document) == pytest.approx(direct_diversity(texts, "spanish"))


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("El paciente de la consulta refiere dolor en los brazos y en la espalda.", "spanish"),
        ("The patient was admitted to the ward with pain in the chest and fever.", "english"),
        ("Patienten har ont i magen och det är svårt att äta som vanligt.", "swedish"),
    ],
)
def test_language_is_guessed_from_function_words(text: str, language: str) -> None:
    assert guess_language([text]) == language
    assert lexical_diversity([text]).language == language


def test_language_codes_and_unknown_languages() -> None:
    assert resolve_language("SV", []) == "swedish"
    assert resolve_language("spanish", []) == "spanish"
    with pytest.raises(UsageError, match="no Snowball stemmer for language 'klingon'") as caught:
        resolve_language("klingon", [])
    assert caught.value.exit_code == 2
