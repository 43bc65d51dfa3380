"""The exported encoder inside Presidio: entity table, analyzer, anonymizer, and the scoring CLI.

A tiny encoder is trained in seconds on notes whose PHI follows fixed patterns
(``tests/ner/conftest.py``); Presidio's analyzer must then find that PHI in a new note.
"""

from __future__ import annotations

import json
import subprocess
from importlib.util import find_spec
from pathlib import Path

import pytest

from protocol import Corpus
from shared.corpus_io import write_corpus
from site_agent.presidio.entities import presidio_entity, presidio_mapping
from site_agent.presidio.scoring import Found, non_overlapping
from tests.ner.conftest import FAST, synthetic_corpus
from tests.tiny_models import tiny_encoder


@pytest.mark.parametrize(
    ("label", "entity"),
    [
        ("NOMBRE_SUJETO_ASISTENCIA", "PERSON"),
        ("PATIENT", "PERSON"),
        ("FAMILIARES_SUJETO_ASISTENCIA", "PERSON"),
        ("FECHAS", "DATE_TIME"),
        ("NUMERO_TELEFONO", "PHONE_NUMBER"),
        ("CORREO_ELECTRONICO", "EMAIL_ADDRESS"),
        ("ID_SUJETO_ASISTENCIA", "ID"),
        ("MRN", "ID"),
        ("HOSPITAL", "ORGANIZATION"),
        ("CALLE", "LOCATION"),
        ("LOC", "LOCATION"),
        ("EDAD_SUJETO_ASISTENCIA", "AGE"),
        ("OTROS_SUJETO_ASISTENCIA", "OTROS_SUJETO_ASISTENCIA"),  # no family: its own name
    ],
)
def test_site_labels_map_to_presidio_entities(label: str, entity: str) -> None:
    assert presidio_entity(label) == entity
    mapping = presidio_mapping([label])
    assert mapping.map_label(label) == entity and mapping.map_label(entity) == entity


def test_overlapping_results_keep_the_most_confident_then_the_longest() -> None:
    found = [
        Found(0, 10, "PERSON", 0.6),
        Found(5, 15, "LOCATION", 0.9),  # most confident: kept, pushes out the PERSON
        Found(20, 30, "ID", 0.5),
        Found(20, 25, "DATE_TIME", 0.5),  # as confident, shorter: dropped
        Found(28, 40, "ID", 0.9),  # outside the 35-character text: dropped
    ]
    spans = non_overlapping(found, 35)
    assert [(s.start, s.end, s.label) for s in spans] == [(5, 15, "LOCATION"), (20, 30, "ID")]


needs_presidio = pytest.mark.skipif(
    find_spec("presidio_analyzer") is None or find_spec("presidio_anonymizer") is None,
    reason='Presidio is an optional extra, not installed here: pip install -e ".[presidio]"',
)

NOTE = "Paciente Ana García nacido el 03/04/1967 en Sevilla el paciente refiere dolor. NHC 123456."
PHI = {"Ana García": "PERSON", "03/04/1967": "DATE_TIME", "Sevilla": "LOCATION", "123456": "ID"}


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny token-classification folder as the export bundle ships it (``encoder/``)."""
    from ner.train import train_annotator

    train, validation = synthetic_corpus(48, 1, "tr"), synthetic_corpus(12, 2, "va")
    texts = [d.text for c in (train, validation) for d in c.documents]
    base = tiny_encoder(tmp_path_factory.mktemp("base") / "tiny", texts, hidden=64)
    out = tmp_path_factory.mktemp("presidio") / "encoder"
    return Path(train_annotator(train, validation, base, FAST, out).model_dir)


@pytest.fixture(scope="module")
def analyzer(encoder: Path) -> object:
    from site_agent.presidio.engines import analyzer_engine

    return analyzer_engine(encoder, "es")


@needs_presidio
def test_presidio_analyzer_with_the_encoder_finds_the_phi_of_a_note(analyzer: object) -> None:
    results = analyzer.analyze(text=NOTE, language="es")  # type: ignore[attr-defined]
    found = {NOTE[r.start : r.end]: r.entity_type for r in results}
    assert found == PHI
    assert all(r.recognition_metadata["recognizer_name"] for r in results)


@needs_presidio
def test_anonymiser_replaces_every_phi_span_with_its_entity(analyzer: object) -> None:
    from site_agent.presidio.engines import anonymise

    hidden = anonymise(NOTE, analyzer, "es")
    assert not any(surface in hidden for surface in PHI)
    assert hidden == (
        "Paciente <PERSON> nacido el <DATE_TIME> en <LOCATION> el paciente refiere dolor. NHC <ID>."
    )


@needs_presidio
def test_evaluate_presidio_prints_the_same_tables_for_both_pipelines(
    encoder: Path, tmp_path: Path
) -> None:
    gold = tmp_path / "test.jsonl"
    write_corpus(synthetic_corpus(12, 5, "te"), gold)
    out = tmp_path / "scores.json"
    argv = ["site-agent", "evaluate", "--gold", str(gold), "--presidio", str(encoder)]
    argv += ["--presidio-language", "es", "--bootstrap", "20", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    for pipeline in ("bare encoder", "Presidio analyzer"):
        for table in ("Evaluation (12 documents)", "Document-level leakage", "Per label"):
            assert f"{pipeline}: {table}" in done.stdout
    reports = json.loads(out.read_text())
    assert set(reports) == {"bare encoder", "Presidio analyzer"}
    for report in reports.values():
        labels = set(report["overlap"]["per_label"])
        assert labels == {"PERSON", "DATE_TIME", "LOCATION", "ID"}
        assert report["overlap"]["micro"]["f1"] > 0.9  # the tiny encoder learned the patterns


@pytest.mark.parametrize("extra", [[], ["--pred", "x.jsonl", "--presidio", "m"]])
def test_evaluate_needs_exactly_one_of_pred_and_presidio(extra: list[str], tmp_path: Path) -> None:
    gold = tmp_path / "g.jsonl"
    write_corpus(Corpus(documents=synthetic_corpus(1, 1, "g").documents), gold)
    done = subprocess.run(
        ["site-agent", "evaluate", "--gold", str(gold), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "exactly one of --pred" in done.stderr
