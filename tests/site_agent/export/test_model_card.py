"""The exported encoder's model card: Hub front matter, figures equal to the bundle's records,
covered by the signed manifest, and the folder still loads with ``transformers.pipeline``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from protocol import Corpus, Document, Span
from protocol.audit import AuditReport
from shared.metrics import corpus_diagnostics
from site_agent.export.bundle import ENCODER_DIR, build_bundle
from site_agent.export.card import CardFacts
from site_agent.export.verify import verify_bundle
from site_agent.train_synthetic.report import ModelScores, SiteReport
from tests.site_agent.export.test_bundle import _audit, _request, site  # noqa: F401
from tests.tiny_models import tiny_encoder

SYNTHETIC_SCORES = ModelScores(
    token_precision=0.81, token_recall=0.72, token_f1=0.7624, exact_f1=0.7, overlap_f1=0.79,
    leakage_rate=0.125,
)  # fmt: skip
GOLD_SCORES = SYNTHETIC_SCORES.model_copy(update={"token_f1": 0.9})


def split_card(text: str) -> tuple[dict, str]:
    """The YAML front matter (parsed) and the Markdown body of a card."""
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def _site_report(path: Path, trained_on: str) -> SiteReport:
    span = Span(start=11, end=14, label="PER")
    notes = Corpus(documents=(Document(id="d", text="Note about Ana.", spans=(span,)),))
    diagnostics = corpus_diagnostics(notes)
    report = SiteReport(
        site_id="h1", n_test_documents=29, n_synthetic_documents=2, gold=GOLD_SCORES,
        synthetic=SYNTHETIC_SCORES, token_f1_gap=0.1376, real_diagnostics=diagnostics,
        synthetic_diagnostics=diagnostics, settings={}, trained_on_corpus_sha256=trained_on,
    )  # fmt: skip
    path.write_text(report.model_dump_json())
    return report


@pytest.fixture
def bundle(
    site: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> tuple[Path, SiteReport, AuditReport]:
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    base = tiny_encoder(tmp_path / "tiny", ["Note about Ana ."], hidden=32)
    tags = ["O", "B-PER", "I-PER"]
    model = AutoModelForTokenClassification.from_pretrained(
        base,
        num_labels=3,
        id2label=dict(enumerate(tags)),
        label2id={t: i for i, t in enumerate(tags)},
    )
    model.save_pretrained(site["encoder"])
    AutoTokenizer.from_pretrained(base).save_pretrained(site["encoder"])
    audit_path = _audit(site)
    request = _request(
        site, audit_path, card=CardFacts(mode="template", language="es", licence="Apache-2.0")
    )
    trained_on = json.loads(site["report"].read_text())["trained_on_corpus_sha256"]
    report = _site_report(site["report"], trained_on)
    folder, _ = build_bundle(request)
    return folder, report, AuditReport.model_validate_json(audit_path.read_text())


def test_card_front_matter_and_figures_equal_the_records(bundle: tuple) -> None:
    folder, _, audit = bundle
    meta, body = split_card((folder / ENCODER_DIR / "README.md").read_text())
    assert meta["license"] == "apache-2.0" and meta["language"] == ["es"]
    assert meta["pipeline_tag"] == "token-classification" and meta["base_model"]
    assert "de-identification" in meta["tags"] and "f1" in meta["metrics"]
    [result] = meta["model-index"][0]["results"]
    assert result["dataset"]["name"] == "h1 test split"
    figures = {m["name"]: m["value"] for m in result["metrics"]}
    assert figures == {
        "token precision": SYNTHETIC_SCORES.token_precision,
        "token recall": SYNTHETIC_SCORES.token_recall,
        "token F1": SYNTHETIC_SCORES.token_f1,
        "exact span F1": SYNTHETIC_SCORES.exact_f1,
        "overlap span F1": SYNTHETIC_SCORES.overlap_f1,
        "document leakage rate": SYNTHETIC_SCORES.leakage_rate,
    }
    assert "| h1 test split | 29 | token F1 | 0.7624 | - |" in body
    assert "| h1 | template | 2 | passed |" in body  # site, mode, amount, verdict
    for rule in audit.rules:  # every privacy figure of the audit, as measured
        measured = "n/a" if rule.measured is None else f"{rule.measured:.4f}"
        if rule.measured is not None and rule.measured.is_integer():
            measured = f"{rule.measured:.0f}"  # counts (kept documents) as integers
        assert f"| {rule.name} | {measured} | {rule.comparison} {rule.threshold:g} |" in body
    sections = ("Labels", "Training data", "Evaluation", "Intended use", "Provenance")
    assert all(f"## {section}" in body for section in sections)
    assert audit.audited_corpus_sha256 in body and "`PER`" in body
    assert "Note about Ana" not in body and "Ruiz" not in body  # never a note's text


def test_card_is_bound_by_the_manifest(bundle: tuple, site: dict[str, Path]) -> None:  # noqa: F811
    folder, _, _ = bundle
    manifest = verify_bundle(folder, site["pub"])
    assert "encoder/README.md" in {a.name for a in manifest.artifacts}
    card = folder / ENCODER_DIR / "README.md"
    card.write_text(card.read_text().replace("passed", "waived"))
    with pytest.raises(Exception, match="hash_mismatch"):
        verify_bundle(folder, site["pub"])


def test_pipeline_still_loads_the_exported_folder(bundle: tuple) -> None:
    from transformers import pipeline

    folder, _, _ = bundle
    tagger = pipeline("token-classification", model=str(folder / ENCODER_DIR), device="cpu")
    predictions = tagger("Note about Ana.")
    assert all(p["entity"] in {"O", "B-PER", "I-PER"} for p in predictions)
