"""The one label-family table: i2b2 and MEDDOCAN labels resolve to the same family for the
person-label diagnostics of ``validate`` and for pseudonymisation."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from protocol.evaluation import CorpusDiagnostics
from shared.label_families import is_person_label, label_family
from shared.label_mapping import load_label_mapping
from site_agent.pseudonymise.surrogates import family_for

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("label", "family"),
    [
        ("HCPName", "name"),
        ("PTName", "name"),
        ("RelativeProxyName", "relative"),
        ("FAMILIARES_SUJETO_ASISTENCIA", "relative"),
        ("PATIENT", "name"),
        ("DOCTOR", "name"),
        ("First_Name", "name"),
        ("Hospital", "care_site"),
        ("LOCATION_HOSPITAL", "care_site"),
        ("Organization", "care_site"),
        ("Date", "date"),
        ("Age", "age"),
        ("Phone", "phone"),
        ("MedicalRecord", "id"),
        ("IDNum", "id"),
        ("Username", "id"),
        ("City", "place"),
        ("Zip", "place"),
        ("Location-Other", "place"),
        ("Street", "street"),
        ("Country", "country"),
        ("Email", "email"),
        ("URL", "url"),
        ("ID_TITULACION_PERSONAL_SANITARIO", "id"),
        ("PERIOD", None),
        ("OTROS_SUJETO_ASISTENCIA", None),
    ],
)
def test_labels_resolve_to_one_family(label: str, family: str | None) -> None:
    assert label_family(label) == family
    assert family_for(label).name == (family or "shape")
    assert is_person_label(label) is (family in {"name", "relative"})


def test_every_meddocan_label_has_the_family_of_its_coarse_class() -> None:
    mapping = load_label_mapping("meddocan_coarse")
    for label, coarse in mapping.mapping.items():
        assert is_person_label(label) is (coarse == "PER"), label
        if coarse in {"ORG", "TIME"}:
            assert label_family(label) == {"ORG": "care_site", "TIME": "date"}[coarse], label
        if coarse == "ID":
            assert label_family(label) in {"id", "phone", "email"}, label
        if coarse == "LOC":
            assert label_family(label) in {"place", "street", "country"}, label


def test_validate_counts_i2b2_names_as_person_labels(tmp_path: Path) -> None:
    """Through the installed console script: ``HCPName`` notes are not 'without a person'."""
    rows = [
        {"id": "a", "text": "Seen by Dr. Wu on 7/22.", "spans": [
            {"start": 8, "end": 14, "label": "HCPName"},
            {"start": 18, "end": 22, "label": "Date"}]},
        {"id": "b", "text": "John Smith, son Tom.", "spans": [
            {"start": 0, "end": 10, "label": "PTName"},
            {"start": 16, "end": 19, "label": "RelativeProxyName"}]},
    ]  # fmt: skip
    corpus = tmp_path / "icu.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "diag.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    done = subprocess.run(
        ["site-agent", "validate", str(corpus), "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    diagnostics = CorpusDiagnostics.model_validate_json(out.read_text(encoding="utf-8"))
    assert diagnostics.person_labels == ("HCPName", "PTName", "RelativeProxyName")
    assert diagnostics.pii_documents_without_person_share == 0.0
    assert "HCPName" in done.stdout
