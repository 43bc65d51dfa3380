"""Pseudonymisation: exact re-offsetting, consistency within a note, filter mode, registry."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest
from faker import Faker

from protocol import Corpus, Document, Span
from site_agent.pseudonymise.corpus import pseudonymise_corpus
from site_agent.pseudonymise.filter import filter_document, sentence_bounds
from site_agent.pseudonymise.records import sensitive_surfaces
from site_agent.pseudonymise.settings import PseudonymiseSettings
from site_agent.pseudonymise.surrogates import NoteContext, family_for, shape_preserving


def _doc(text: str, marks: list[tuple[str, str]], doc_id: str = "d1") -> Document:
    """Spans for each (surface, label) in order of appearance (repeats found left to right)."""
    spans, cursor = [], 0
    for surface, label in marks:
        start = text.index(surface, cursor)
        spans.append(Span(start=start, end=start + len(surface), label=label))
        cursor = start + len(surface)
    return Document(id=doc_id, text=text, spans=tuple(spans))


NOTE = _doc(
    "Paciente Juan Pérez, 70 años, ingresa el 12/12/2016 en el Hospital La Paz. "
    "Teléfono 912 345 678. Juan Pérez vive en Madrid. Correo: jp@example.org. NHC 368503.",
    [
        ("Juan Pérez", "NOMBRE_SUJETO_ASISTENCIA"),
        ("70 años", "EDAD_SUJETO_ASISTENCIA"),
        ("12/12/2016", "FECHAS"),
        ("Hospital La Paz", "HOSPITAL"),
        ("912 345 678", "NUMERO_TELEFONO"),
        ("Juan Pérez", "NOMBRE_SUJETO_ASISTENCIA"),
        ("Madrid", "TERRITORIO"),
        ("jp@example.org", "CORREO_ELECTRONICO"),
        ("368503", "ID_SUJETO_ASISTENCIA"),
    ],
)


def _surrogate(doc: Document, seed: int = 13) -> tuple[Document, list]:
    result = pseudonymise_corpus(Corpus(documents=(doc,)), PseudonymiseSettings(seed=seed))
    return result.corpus.documents[0], result.surrogates


def test_spans_are_reoffset_onto_the_surrogates() -> None:
    new, records = _surrogate(NOTE)
    by_original = {r.original: r.surrogate for r in records}
    assert len(new.spans) == len(NOTE.spans)
    for old_span, new_span in zip(NOTE.spans, new.spans, strict=True):
        assert new_span.label == old_span.label
        assert new.text[new_span.start : new_span.end] == by_original[NOTE.surface(old_span)]
    for original in ("Juan Pérez", "912 345 678", "jp@example.org", "368503", "12/12/2016"):
        assert original not in new.text
    # the text between spans is untouched
    assert new.text.startswith("Paciente ") and "ingresa el " in new.text


def test_same_surface_gets_the_same_surrogate_within_a_document() -> None:
    new, _ = _surrogate(NOTE)
    names = [new.surface(s) for s in new.spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"]
    assert len(names) == 2 and names[0] == names[1]
    assert len(names[0].split()) == 2  # as many name words as the original


def test_surrogates_keep_the_shape_of_numbers_and_dates() -> None:
    new, _ = _surrogate(NOTE)
    surfaces = {s.label: new.surface(s) for s in new.spans}
    assert len(surfaces["NUMERO_TELEFONO"]) == len("912 345 678")
    assert surfaces["NUMERO_TELEFONO"].replace(" ", "").isdigit()
    assert surfaces["ID_SUJETO_ASISTENCIA"].isdigit() and len(surfaces["ID_SUJETO_ASISTENCIA"]) == 6
    day, month, year = surfaces["FECHAS"].split("/")
    assert len(day) == 2 and len(month) == 2 and len(year) == 4
    assert dt.date(int(year), int(month), int(day)) != dt.date(2016, 12, 12)
    age = surfaces["EDAD_SUJETO_ASISTENCIA"]
    assert age.endswith(" años") and 1 <= abs(int(age.split()[0]) - 70) <= 2
    assert "@" in surfaces["CORREO_ELECTRONICO"]


def test_dates_in_a_note_move_together() -> None:
    doc = _doc(
        "Ingreso 03/03/2016, alta 13/03/2016, control 2016-04-02 y 5/1/99.",
        [("03/03/2016", "FECHAS"), ("13/03/2016", "FECHAS"), ("2016-04-02", "FECHAS"),
         ("5/1/99", "FECHAS")],
    )  # fmt: skip
    new, _ = _surrogate(doc)
    moved = [new.surface(s) for s in new.spans]
    admitted = dt.datetime.strptime(moved[0], "%d/%m/%Y").date()
    discharged = dt.datetime.strptime(moved[1], "%d/%m/%Y").date()
    control = dt.date.fromisoformat(moved[2])
    assert (discharged - admitted).days == 10 and (control - admitted).days == 30
    assert 30 <= abs((admitted - dt.date(2016, 3, 3)).days) <= 3 * 365
    shifted = dt.date(1999, 1, 5) + (admitted - dt.date(2016, 3, 3))
    assert moved[3] == f"{shifted.day}/{shifted.month}/{shifted.year % 100:02d}"


def test_pseudonymisation_is_deterministic_per_seed() -> None:
    first, _ = _surrogate(NOTE, seed=1)
    again, _ = _surrogate(NOTE, seed=1)
    other, _ = _surrogate(NOTE, seed=2)
    assert first == again
    assert first.text != other.text


def test_surrogate_records_name_originals_and_surrogates() -> None:
    _, records = _surrogate(NOTE)
    surfaces = sensitive_surfaces(records)
    assert "Juan Pérez" in surfaces["originals"]
    assert len(records) == 8  # the repeated name is recorded once
    assert not set(surfaces["originals"]) & set(surfaces["surrogates"])


@pytest.mark.parametrize(
    ("label", "family"),
    [
        ("NOMBRE_PERSONAL_SANITARIO", "name"),
        ("FAMILIARES_SUJETO_ASISTENCIA", "relative"),
        ("PER", "name"),
        ("NUMERO_FAX", "phone"),
        ("ID_TITULACION_PERSONAL_SANITARIO", "id"),
        ("CENTRO_SALUD", "care_site"),
        ("PAIS", "country"),
        ("CALLE", "street"),
        ("DATE", "date"),
        ("PATIENT_NAME", "name"),
        ("OTROS_SUJETO_ASISTENCIA", "shape"),
    ],
)
def test_labels_resolve_to_their_family(label: str, family: str) -> None:
    assert family_for(label).name == family


def test_shape_preserving_fallback() -> None:
    out = shape_preserving("AB-12 cd", NoteContext(Faker("en_US"), random.Random(0), 0))
    assert len(out) == 8 and out[2] == "-" and out[5] == " "
    assert out[:2].isupper() and out[3:5].isdigit() and out[6:].islower()


def test_sentence_bounds_tile_the_text() -> None:
    text = "One. Two!  Three?\nFour"
    bounds = sentence_bounds(text)
    assert "".join(text[a:b] for a, b in bounds) == text
    assert len(bounds) == 4


def test_filter_drops_pii_sentences_and_reoffsets_the_rest() -> None:
    doc = _doc(
        "Seen by Dr Ruiz. No allergies. Lives in Soria. Follow-up in Soria.",
        [("Ruiz", "PER"), ("Soria", "LOC"), ("Soria", "LOC")],
    )
    kept, dropped = filter_document(doc)
    assert kept is not None and dropped == 3
    assert kept.text == "No allergies. "
    assert kept.spans == ()
    only_names, dropped = filter_document(doc, {"PER"})
    assert only_names is not None and dropped == 1
    assert only_names.text.startswith("No allergies.")
    assert [only_names.surface(s) for s in only_names.spans] == ["Soria", "Soria"]


def test_filter_drops_documents_with_nothing_left() -> None:
    doc = _doc("Dr Ruiz.", [("Ruiz", "PER")])
    corpus = Corpus(documents=(doc, _doc("Plain text.", [], "d2")))
    result = pseudonymise_corpus(corpus, PseudonymiseSettings(mode="filter"))
    assert [d.id for d in result.corpus.documents] == ["d2"]
    assert result.dropped_documents == 1


def test_meddocan_documents_reoffset_exactly(meddocan_dir: Path) -> None:
    lines = (meddocan_dir / "train.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    docs = tuple(Document.model_validate(json.loads(line)) for line in lines)
    result = pseudonymise_corpus(Corpus(documents=docs), PseudonymiseSettings())
    pairs = {(r.doc_id, r.original): r.surrogate for r in result.surrogates}
    for old, new in zip(docs, result.corpus.documents, strict=True):
        assert [s.label for s in old.spans] == [s.label for s in new.spans]
        for a, b in zip(old.spans, new.spans, strict=True):
            assert new.surface(b) == pairs[(old.id, old.surface(a))]
