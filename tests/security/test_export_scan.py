"""The bundle scan finds planted real text (so a clean scan of a real bundle means something)."""

from __future__ import annotations

from pathlib import Path

from protocol import Corpus, Document, Span
from tests.bundles import good_bundle, site_keys
from tests.security.scan import leaks

REAL = Corpus(
    documents=(
        Document(
            id="r1",
            text="Paciente Juan Perez Garcia ingresa por dolor toracico. Alta sin incidencias. "
            "28049 Madrid.",
            spans=(Span(start=9, end=26, label="NOMBRE"), Span(start=77, end=82, label="CP")),
        ),
    )
)


def test_clean_bundle_has_no_leak(tmp_path: Path) -> None:
    bundle = good_bundle(tmp_path, "h1", site_keys(tmp_path / "k"))
    assert leaks(bundle, REAL) == []


def test_planted_sentence_and_name_are_found(tmp_path: Path) -> None:
    bundle = good_bundle(tmp_path, "h1", site_keys(tmp_path / "k"))
    (bundle / "encoder").mkdir()
    (bundle / "encoder" / "vocab.txt").write_text("juan\nJuan Perez Garcia\n")
    report = bundle / "audit.json"
    report.write_text(report.read_text() + "Paciente Juan Perez Garcia ingresa por dolor toracico.")
    found = leaks(bundle, REAL)
    assert "encoder/vocab.txt: PII NOMBRE of r1" in found
    assert "audit.json: sentence of r1" in found


def test_a_string_inside_a_longer_token_is_not_a_leak(tmp_path: Path) -> None:
    bundle = good_bundle(tmp_path, "h1", site_keys(tmp_path / "k"))
    (bundle / "digest.txt").write_text("e2c3d6f3978f8e026e7f6a49c2528049dd40")
    assert leaks(bundle, REAL) == []
    (bundle / "digest.txt").write_text("cp: 28049\n")
    assert leaks(bundle, REAL) == ["digest.txt: PII CP of r1"]
