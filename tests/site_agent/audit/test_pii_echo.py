"""PII echo: whole-word, case-insensitive matches; short and common surfaces never identify."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_agent.audit.corpus_audit import run_audit
from site_agent.audit.pii_echo import collect_surfaces, is_specific
from site_agent.audit.policy import AuditPolicy, PiiEchoSettings
from site_agent.cli.commands.audit import read_extra_surfaces

from .builders import corpus, make_doc, measured

REAL = corpus(
    make_doc(
        "r0",
        "Paciente",
        ("Ana Ruiz Soto", "NOMBRE"),
        "sexo",
        ("H", "SEXO"),
        "vive en",
        ("Madrid", "TERRITORIO"),
    ),
    make_doc(
        "r1",
        "NHC",
        ("4455667", "ID"),
        "vive en",
        ("Madrid", "TERRITORIO"),
        "de",
        ("70 años", "EDAD"),
    ),
    make_doc("r2", "Vive en Madrid. Correo", ("ana.ruiz@example.org", "EMAIL")),
    *(make_doc(f"f{i}", "texto sin datos en Madrid") for i in range(3)),
)


@pytest.mark.parametrize(
    ("text", "identifying", "labels"),
    [
        ("La paciente ANA RUIZ SOTO acude.", 1, {"NOMBRE": 1}),
        ("Anatomía: ana ruiz sotomayor.", 0, {}),  # no word boundary
        ("NHC 4455667.", 1, {"ID": 1}),
        ("NHC 144556678.", 0, {}),
        ("Sexo: H. Vive en Madrid.", 0, {"TERRITORIO": 1}),  # "H" too short, Madrid common
        ("Escribir a ana.ruiz@example.org hoy", 1, {"EMAIL": 1}),
        ("Tiene 70 años.", 0, {"EDAD": 1}),  # not specific
    ],
)
def test_echoes_by_table(text: str, identifying: int, labels: dict[str, int]) -> None:
    synth = corpus(make_doc("s0", text))
    result = measured(REAL, synth, "pii_echo")
    figures = result.figures(result.identifying_docs() | True)
    assert figures["identifying_documents"] == identifying
    assert {
        k: v["occurrences"] for k, v in figures["by_label"].items() if v["occurrences"]
    } == labels


def test_surfaces_short_common_and_extra() -> None:
    surfaces = {
        s.text: s
        for s in collect_surfaces(REAL, PiiEchoSettings(), ["Pedro Gil", ("SURROGATE", "Zoe")])
    }
    assert "h" not in surfaces  # shorter than min_chars
    assert not surfaces["madrid"].identifying  # in the text of 6 of 6 real documents
    assert surfaces["ana ruiz soto"].identifying
    assert surfaces["pedro gil"].identifying and surfaces["pedro gil"].label == "EXTRA"
    assert "zoe" not in surfaces  # extra surfaces obey min_chars too


def test_ignored_labels_are_not_searched() -> None:
    settings = PiiEchoSettings(ignore_labels=("NOMBRE",))
    assert "ana ruiz soto" not in {s.text for s in collect_surfaces(REAL, settings)}


@pytest.mark.parametrize(
    ("surface", "specific"),
    [
        ("Ana Ruiz", True),
        ("ERNESTO RIVERA", True),
        ("Medina del Campo", True),
        ("Ernesto", False),
        ("28 28 70973", True),
        ("368503", True),
        ("28009", False),
        ("70 años", False),
        ("dos días", False),
        ("septiembre de 2000", False),
        ("ana.ruiz@example.org", True),
        ("12/12/2016", False),
        ("NHC 12/12/2016 4455", True),
        ("Ángel Núñez", True),
    ],
)
def test_specific_surfaces(surface: str, specific: bool) -> None:
    assert is_specific(surface) is specific


def test_ignored_labels_and_word_sequences() -> None:
    surfaces = collect_surfaces(REAL, PiiEchoSettings())
    assert {s.text for s in surfaces} >= {"ana ruiz soto", "4455667", "70 años", "madrid"}


def test_extra_surfaces_file_and_surrogates_drop_documents(tmp_path: Path) -> None:
    path = tmp_path / "extra.txt"
    path.write_text("Pedro Gil Soto\n\nSURROGATE\tLaura Vidal Mora\n", encoding="utf-8")
    extra = read_extra_surfaces(path)
    assert extra == ["Pedro Gil Soto", ("SURROGATE", "Laura Vidal Mora")]
    synth = corpus(make_doc("s0", "Vino LAURA VIDAL MORA."), make_doc("s1", "Sin datos."))
    report = run_audit(REAL, synth, AuditPolicy(), tmp_path / "out", extra_pii_surfaces=extra)
    assert report.dropped_by_reason["pii_echo"] == 1
    assert (
        report.measures["pii_echo"]["before"]["by_label"]["SURROGATE"]["identifying_occurrences"]
        == 1
    )


def test_surrogate_echoes_are_told_apart_from_real_gold_strings(tmp_path: Path) -> None:
    """An echo of the pipeline's own surrogate is not reported as a real PII string."""
    surrogates = [("NOMBRE", "Laura Vidal Mora"), ("NOMBRE", "Ana Ruiz Soto")]  # 2nd is gold
    synth = corpus(
        make_doc("s0", "Vino LAURA VIDAL MORA."),  # a surrogate only
        make_doc("s1", "Vino Ana Ruiz Soto con Laura Vidal Mora."),  # a real name too
        make_doc("s2", "Sin datos."),
    )
    origins = {s.text: s.origin for s in collect_surfaces(REAL, PiiEchoSettings(), surrogates)}
    assert origins["laura vidal mora"] == "surrogate" and origins["ana ruiz soto"] == "gold"
    report = run_audit(REAL, synth, AuditPolicy(), tmp_path / "out", extra_pii_surfaces=surrogates)
    before = report.measures["pii_echo"]["before"]
    assert before["identifying_documents"] == 2
    assert before["identifying_documents_gold"] == 1
    assert before["identifying_documents_surrogate_only"] == 1
    assert before["surrogate_surfaces"] == 1
    markdown = (tmp_path / "out" / "audit.md").read_text(encoding="utf-8")
    assert "0 documents contain a real gold PII string" in markdown  # both were dropped
    assert "a surrogate of the pseudonymised training text" in markdown
    assert "identifying gold PII string of the real corpus" not in markdown


@pytest.mark.parametrize(
    ("surrogate", "label", "identifying", "always"),
    [
        ("Laura Vidal Mora", "NOMBRE", True, True),  # a fake full name points at the training text
        ("45 años", "EDAD", False, True),  # a fake age says nothing: counted, not dropped
        ("70 años", "EDAD", False, True),  # a gold age listed as a surrogate too: the gold rules
        ("Madrid", "EDAD", False, True),  # common in the real notes' text
        ("Reino Unido", "PAIS", False, True),  # two capitalised words, but a country
    ],
)
def test_extra_surfaces_identify_by_the_gold_rules_unless_always(
    surrogate: str, label: str, identifying: bool, always: bool
) -> None:
    for strict, expected in ((False, identifying), (True, always)):
        settings = PiiEchoSettings(extra_always_identify=strict)
        surfaces = {s.text: s for s in collect_surfaces(REAL, settings, [(label, surrogate)])}
        (key,) = [k for k in surfaces if k == " ".join(surrogate.lower().split())]
        assert surfaces[key].identifying is expected
        assert surfaces[key].origin == (
            "gold" if surrogate in {"70 años", "Madrid"} else "surrogate"
        )


def test_an_echoed_fake_age_is_counted_and_kept(tmp_path: Path) -> None:
    synth = corpus(make_doc("s0", "Varón de 45 años."), make_doc("s1", "Sin datos."))
    extra = [("EDAD", "45 años")]
    kept = run_audit(REAL, synth, AuditPolicy(), tmp_path / "a", extra_pii_surfaces=extra)
    assert kept.dropped_by_reason["pii_echo"] == 0
    echo = kept.measures["pii_echo"]["before"]["by_label"]["EDAD"]
    assert echo["occurrences"] == 1 and echo["identifying_occurrences"] == 0
    strict = AuditPolicy.model_validate({"pii_echo": {"extra_always_identify": True}})
    dropped = run_audit(REAL, synth, strict, tmp_path / "b", extra_pii_surfaces=extra)
    assert dropped.dropped_by_reason["pii_echo"] == 1
