"""Label mappings: loading from TOML/JSON, every load error, and applying them to corpora."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol import Corpus, Document, LabelMapping, Span
from shared.corpus_io import read_corpus
from shared.errors import ConfigError
from shared.label_mapping import apply_mapping, builtin_schemes, load_label_mapping

MEDDOCAN_LABELS = {
    "CALLE", "CENTRO_SALUD", "CORREO_ELECTRONICO", "EDAD_SUJETO_ASISTENCIA",
    "FAMILIARES_SUJETO_ASISTENCIA", "FECHAS", "HOSPITAL", "ID_ASEGURAMIENTO",
    "ID_CONTACTO_ASISTENCIAL", "ID_EMPLEO_PERSONAL_SANITARIO", "ID_SUJETO_ASISTENCIA",
    "ID_TITULACION_PERSONAL_SANITARIO", "INSTITUCION", "NOMBRE_PERSONAL_SANITARIO",
    "NOMBRE_SUJETO_ASISTENCIA", "NUMERO_FAX", "NUMERO_TELEFONO", "OTROS_SUJETO_ASISTENCIA",
    "PAIS", "PROFESION", "SEXO_SUJETO_ASISTENCIA", "TERRITORIO",
}  # fmt: skip
SHAPE = (
    'a mapping file holds name = "...", coarse_labels = [...] and a [mapping] table of '
    'SITE_LABEL = "COARSE_LABEL" lines'
)
SMALL = LabelMapping(
    name="small", coarse_labels=("PER", "LOC"), mapping={"NOMBRE": "PER", "CIUDAD": "LOC"}
)


def test_builtin_meddocan_scheme_maps_all_22_labels() -> None:
    assert "meddocan_coarse" in builtin_schemes()
    mapping = load_label_mapping("meddocan_coarse")
    assert set(mapping.mapping) == MEDDOCAN_LABELS
    assert mapping.coarse_labels == ("PER", "ORG", "LOC", "TIME", "ID", "MISC")
    assert set(mapping.mapping.values()) == set(mapping.coarse_labels)
    assert mapping.map_label("CORREO_ELECTRONICO") == "ID"


def test_meddocan_train_mapped_keeps_every_span(meddocan_dir: Path) -> None:
    corpus = read_corpus(meddocan_dir / "train.jsonl")
    mapped = apply_mapping(corpus, load_label_mapping("meddocan_coarse"))
    assert mapped.labels == ("PER", "ORG", "LOC", "TIME", "ID", "MISC")
    before = [(d.id, s.start, s.end) for d in corpus.documents for s in d.spans]
    assert [(d.id, s.start, s.end) for d in mapped.documents for s in d.spans] == before
    first = corpus.documents[0]
    assert [s.label for s in mapped.documents[0].spans[:3]] == [
        {"NOMBRE_SUJETO_ASISTENCIA": "PER", "ID_SUJETO_ASISTENCIA": "ID"}.get(s.label, "?")
        for s in first.spans[:3]
    ]
    assert mapped.provenance.notes["label_mapping"] == "meddocan_coarse"


def test_toml_and_json_files_load_the_same(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        'name = "small"\ncoarse_labels = ["PER", "LOC"]\n[mapping]\nNOMBRE = "PER"\n'
        'CIUDAD = "LOC"\n',
        encoding="utf-8",
    )
    (tmp_path / "m.json").write_text(json.dumps(SMALL.model_dump()), encoding="utf-8")
    assert (
        load_label_mapping(tmp_path / "m.toml") == SMALL == load_label_mapping(tmp_path / "m.json")
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.toml",
            'name = "x"\ncoarse_labels = ["PER"]\n[mapping]\nNOMBRE "PER"\n',
            "{path}:4: not valid TOML (Expected '=' after a key in a key/value pair "
            "(at line 4, column 8)); fix: " + SHAPE,
        ),
        (
            "bad.json",
            '{"name": "x",\n "coarse_labels": ["PER"],\n "mapping": {"A": "PER",}}',
            "{path}:3: not valid JSON (Expecting property name enclosed in double quotes); fix: "
            + SHAPE,
        ),
        (
            "m.yaml",
            "name: x",
            "{path}: unknown mapping file type '.yaml'; fix: use .toml or .json",
        ),
    ],
)
def test_unreadable_files(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_label_mapping(path)
    assert str(info.value) == message.format(path=path)
    assert info.value.exit_code == 78


def test_invalid_mapping_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('name = "x"\n[mapping]\nNOMBRE = "PER"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_label_mapping(path)
    assert info.value.message == f"{path}: not a valid label mapping; fix: {SHAPE}"
    assert info.value.problems == ["coarse_labels -> Field required"]
    path.write_text(
        'name = "x"\ncoarse_labels = ["PER"]\n[mapping]\nNOMBRE = "PERSON"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError) as info:
        load_label_mapping(path)
    assert info.value.problems == [
        "label mapping 'x' maps to labels outside its coarse scheme: {'NOMBRE': 'PERSON'}; "
        "fix: use one of ['PER'] or add the target to coarse_labels"
    ]


def test_missing_file_names_the_builtin_schemes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_label_mapping(tmp_path / "nope.toml")
    assert str(info.value) == (
        f"{tmp_path / 'nope.toml'}: no such label mapping file; fix: give the path of a .toml "
        "or .json mapping or a built-in scheme name (meddocan_coarse)"
    )


def corpus_with(labels: list[str]) -> Corpus:
    text = "Ana vive en Lima y Rosa"
    where = {"NOMBRE": (0, 3), "CIUDAD": (12, 16), "OTRO": (19, 23)}
    spans = [Span(start=where[lab][0], end=where[lab][1], label=lab) for lab in labels]
    return Corpus(documents=(Document(id="d", text=text, spans=spans, source="s"),))


def test_apply_mapping_relabels_and_uses_the_coarse_label_set() -> None:
    mapped = apply_mapping(corpus_with(["NOMBRE", "CIUDAD"]), SMALL)
    doc = mapped.documents[0]
    assert [(doc.surface(s), s.label) for s in doc.spans] == [("Ana", "PER"), ("Lima", "LOC")]
    assert mapped.labels == ("PER", "LOC")
    assert doc.source == "s"


def test_unmapped_labels_are_an_error_or_dropped() -> None:
    corpus = corpus_with(["NOMBRE", "CIUDAD", "OTRO"])
    with pytest.raises(ConfigError) as info:
        apply_mapping(corpus, SMALL)
    assert str(info.value) == (
        "label mapping 'small' has no entry for corpus label(s) ['OTRO']; fix: add "
        'OTRO = "..." (one of PER, LOC) to its [mapping], or drop those spans'
    )
    mapped = apply_mapping(corpus, SMALL, unmapped="drop")
    assert [s.label for s in mapped.documents[0].spans] == ["PER", "LOC"]
    assert mapped.provenance.notes["label_mapping_dropped_spans"] == "1 (OTRO)"
