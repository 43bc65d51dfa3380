"""Issue 50: a reworded real patient passed the audit; the quasi-identifier rule drops it.

The finding: a synthetic note carrying one real patient's date of birth, age and town, with
the name changed and the sentence reworded, was kept under both ``sensitive_ngram_identifiers
= "specific"`` and ``"all"``: no 10-word run of the real note survives, and the PII echo never
treats a date, an age or a town as identifying. These tests failed before
``site_agent/audit/quasi_identifiers.py`` (the note was kept) and pass after.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import Corpus
from site_agent.audit.corpus_audit import run_audit
from site_agent.audit.policy import AuditPolicy, FilterSettings, QuasiIdentifierSettings
from site_agent.audit.quasi_identifiers import QuasiIdentifierResult
from tests.site_agent.audit.builders import corpus, make_doc, measured, random_corpus

PATIENT = make_doc(
    "patient",
    "Paciente",
    ("Rosario Melgarejo Tirado", "NOMBRE_SUJETO_ASISTENCIA"),
    ", nacida el",
    ("14/02/1961", "FECHAS"),
    ", de",
    ("58 años", "EDAD_SUJETO_ASISTENCIA"),
    ", vecina de",
    ("Villalba del Alcor", "TERRITORIO"),
    ", ingresa por un feocromocitoma bilateral con crisis hipertensivas.",
)
# Another real patient of the same town and age: neither detail is rare on its own.
NEIGHBOUR = make_doc(
    "neighbour",
    "Varón de",
    ("58 años", "EDAD_SUJETO_ASISTENCIA"),
    "natural de",
    ("Villalba del Alcor", "TERRITORIO"),
    "que acude a consulta el",
    ("03/05/2019", "FECHAS"),
    "por lumbalgia.",
)
SAME_DAY = make_doc(
    "same-day", "Mujer atendida el", ("14/02/1961", "FECHAS"), "en urgencias por caída."
)


def real_notes() -> Corpus:
    filler = random_corpus(3, 30, "r")
    return Corpus(documents=(PATIENT, NEIGHBOUR, SAME_DAY, *filler.documents))


REWORDED = (
    "Se trata de una mujer de Villalba del Alcor, de 58 años, cuya fecha de nacimiento es "
    "el 14-02-1961. Valorada por hipertensión paroxística; la paciente Carmen Ibáñez Luque "
    "refiere cefalea y sudoración."
)
# one detail only, and one that two real patients share
UNRELATED = "Paciente de 58 años que acude por dolor torácico; trabaja de administrativa."


@pytest.mark.parametrize("identifiers", ["specific", "all"])
def test_a_reworded_real_patient_is_dropped(tmp_path: Path, identifiers: str) -> None:
    synthetic = corpus(make_doc("s-patient", REWORDED), make_doc("s-other", UNRELATED))
    policy = AuditPolicy(filters=FilterSettings(sensitive_ngram_identifiers=identifiers))
    report = run_audit(real_notes(), synthetic, policy, tmp_path / identifiers)
    assert report.dropped_by_reason.get("quasi_identifier") == 1
    assert [d.id for d in report.dropped_documents] == ["s-patient"]
    assert report.n_kept_documents == 1  # the unrelated note
    rule = next(r for r in report.rules if r.name == "quasi_identifier_documents")
    assert rule.passed and rule.measured == 0.0


def test_details_found_together_flag_a_note_though_none_is_rare() -> None:
    """Age and town are each in two real notes, the date in two: none is rare, but the date
    and the town are gold mentions of one real note."""
    text = "Mujer de Villalba del Alcor nacida el 14/02/1961."
    result = measured(real_notes(), corpus(make_doc("s", text)), "quasi_identifiers")
    assert isinstance(result, QuasiIdentifierResult)
    assert (bool(result.rare[0]), bool(result.together[0])) == (False, True)


@pytest.mark.parametrize(("rare_max_notes", "flagged"), [(0, False), (1, True)])
def test_a_detail_seen_in_one_real_note_flags_a_note_alone_when_asked(
    rare_max_notes: int, flagged: bool
) -> None:
    """Off by default: on MEDDOCAN it flags most notes of other patients (docs/results.md)."""
    real = Corpus(documents=(*real_notes().documents, make_doc("x", ("Zahara", "TERRITORIO"))))
    text = "Paciente sin antecedentes, natural de Zahara."
    settings = QuasiIdentifierSettings(rare_max_notes=rare_max_notes)
    policy = AuditPolicy(quasi_identifiers=settings)
    result = measured(real, corpus(make_doc("s", text)), "quasi_identifiers", policy)
    assert (bool(result.rare[0]), bool(result.together[0])) == (flagged, False)


@pytest.mark.parametrize(("labels", "flagged"), [("quasi", False), ("all", True)])
def test_a_name_and_an_id_are_left_to_the_pii_echo_unless_all_labels(
    labels: str, flagged: bool
) -> None:
    real = Corpus(
        documents=(
            *real_notes().documents,
            make_doc("y", "Paciente", ("Berta", "NOMBRE_SUJETO_ASISTENCIA"), "NHC", ("8812", "ID")),
        )
    )
    policy = AuditPolicy(quasi_identifiers=QuasiIdentifierSettings(labels=labels))
    text = "Berta, historia 8812."
    result = measured(real, corpus(make_doc("s", text)), "quasi_identifiers", policy)
    assert bool(result.flagged[0]) is flagged


def test_details_of_two_different_real_notes_do_not_flag() -> None:
    text = "Varón de 58 años atendido el 03/05/2019."  # both of NEIGHBOUR: flagged
    other = "Atendido el 03/05/2019, natural de Villalba del Alcor."  # both of NEIGHBOUR too
    mixed = "Visto el 14/02/1961 en consulta; cita el 03/05/2019."  # SAME_DAY + NEIGHBOUR
    synthetic = corpus(make_doc("a", text), make_doc("b", other), make_doc("c", mixed))
    result = measured(real_notes(), synthetic, "quasi_identifiers")
    assert result.together.tolist() == [True, True, False]


def test_common_details_never_count() -> None:
    """Madrid is in the text of every filler note: common, not a quasi-identifier."""
    real = Corpus(
        documents=(
            *real_notes().documents,
            *(make_doc(f"m{i}", "Vive en", ("Madrid", "TERRITORIO"), ".") for i in range(5)),
        )
    )
    policy = AuditPolicy(quasi_identifiers=QuasiIdentifierSettings(max_document_fraction=0.1))
    text = "Vive en Madrid desde el 14/02/1961."  # Madrid common; the date alone not rare
    result = measured(real, corpus(make_doc("s", text)), "quasi_identifiers", policy)
    assert not result.flagged[0]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.permutations(["town", "age", "birth"]),
    date_separator=st.sampled_from(["/", "-", ".", " "]),
    upper=st.booleans(),
)
def test_any_rewording_of_the_patients_details_is_flagged(
    order: list[str], date_separator: str, upper: bool
) -> None:
    parts = {
        "town": "reside en Villalba del Alcor",
        "age": "tiene 58 años",
        "birth": f"nació el {date_separator.join(['14', '02', '1961'])}",
    }
    text = "La paciente Julia Pardo " + ", ".join(parts[k] for k in order) + "."
    text = text.upper() if upper else text
    result = measured(real_notes(), corpus(make_doc("s", text)), "quasi_identifiers")
    assert result.flagged[0], text
