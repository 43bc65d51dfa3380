"""benchmarks/audit_drops.py: which real identifiers are behind the n-gram filter's drops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.audit_drops import attribute
from protocol import Document
from tests.site_agent.privacy.test_specific import REAL

REPO = Path(__file__).resolve().parents[2]


def test_each_rule_names_the_notes_and_the_labels_behind_them() -> None:
    synth = [
        Document(id="date", text="fecha de ingreso 12 03 2021 en planta"),
        Document(id="two", text="paciente varón de 45 años que ingresa"),
        Document(id="name", text="la paciente Ana Ruiz Pérez refiere fiebre"),
        Document(id="none", text="fecha de alta sin incidencias"),
    ]
    every, specific = attribute(REAL, synth, n=4, share=0.5)
    assert (every.rule, specific.rule) == ("all", "specific")
    assert every.notes == {0, 1, 2} and specific.notes == {1, 2}
    two = {"SEXO_SUJETO_ASISTENCIA": {1}, "EDAD_SUJETO_ASISTENCIA": {1}}
    assert every.by_label == {"FECHAS": {0}, **two, "NOMBRE_SUJETO_ASISTENCIA": {2}}
    assert specific.by_label == {**two, "NOMBRE_SUJETO_ASISTENCIA": {2}}


def test_a_work_dir_without_a_run_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/audit_drops.py", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 2 and "site-agent synthesize" in done.stderr
