"""The shipped demo corpus with its labels written as a hospital might write them (mixed case,
a hyphen, a dot, a non-ASCII letter) runs ``site-agent synthesize --demo`` to a signed export
(issue 46: the template mode read only upper-case placeholders, so the filler filled nothing
and the audit kept no note). Tiny models and a few steps, through the installed console
script, as an operator runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from shared.corpus_io import read_corpus
from site_agent.demo import DEMO_CORPUS, DEMO_SITE_ID
from site_agent.export.verify import verify_bundle
from site_agent.site_setup import key_paths
from site_agent.stages.pipeline import stage_artifact
from tests.tiny_models import tiny_causal_lm, tiny_encoder

RENAMED = {
    "PER": "Patient-Name",
    "ID": "Id",
    "AGE": "Age",
    "LOCATION": "Location",
    "PHONE": "Phone.Number",
    "HOSPITAL": "Hospital",
    "DATE": "Fecha_Día",
}

SMALL_RUN = """\
[annotator.training]
epochs = 1

[adapt]
max_steps = 2

[generation]
min_phi_rate = 0.0  # a tiny random generator writes no placeholders of its own
samples_per_prompt = 2
max_new_tokens = 24
max_documents = 8
"""


def _mixed_corpus(path: Path) -> list[str]:
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    texts = []
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            note = json.loads(line)
            for span in note["spans"]:
                span["label"] = RENAMED[span["label"]]
            texts.append(note["text"])
            out.write(json.dumps(note, ensure_ascii=False) + "\n")
    return texts


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("mixed-demo")
    texts = _mixed_corpus(root / "mixed.jsonl")
    (root / "site.toml").write_text(SMALL_RUN, encoding="utf-8")
    generator = tiny_causal_lm(root / "generator", texts)
    encoder = tiny_encoder(root / "encoder", texts)
    work = root / "work"
    result = subprocess.run(
        [
            "site-agent", "synthesize", "--demo", "--site-config", "site.toml",
            "--corpus", "mixed.jsonl", "--work-dir", str(work),
            "--generator", str(generator), "--annotator", str(encoder), "--device", "cpu",
        ],
        cwd=root, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    return work, result


def _bundle(work: Path) -> Path:
    (bundle,) = [p for p in (work / "outbox").iterdir() if p.is_dir()]
    return bundle


def test_the_mixed_case_demo_reaches_a_signed_export(
    demo_run: tuple[Path, subprocess.CompletedProcess],
) -> None:
    work, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    _private, public = key_paths(work / "keys", DEMO_SITE_ID)
    manifest = verify_bundle(_bundle(work), public)
    assert {"synthetic_corpus", "audit_report", "encoder_weights"} <= {
        a.kind for a in manifest.artifacts
    }


def test_the_filled_spans_the_export_and_the_site_report_keep_the_hospitals_labels(
    demo_run: tuple[Path, subprocess.CompletedProcess],
) -> None:
    work, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    generated = stage_artifact(work, "generate", "corpus")
    assert generated is not None
    corpus = read_corpus(generated)
    filled = {s.label for d in corpus.documents for s in d.spans}
    assert len(filled) >= 2 and filled <= set(RENAMED.values())  # the prompts' placeholders
    for doc in corpus.documents:
        assert "{{" not in doc.text and "}}" not in doc.text
    shipped = read_corpus(_bundle(work) / "synthetic.jsonl")
    labels = {s.label for d in shipped.documents for s in d.spans}
    assert labels and labels <= filled
    report = json.loads((_bundle(work) / "site_report.json").read_text(encoding="utf-8"))
    assert set(report["real_diagnostics"]["labels"]) == set(RENAMED.values())
    assert set(report["synthetic_diagnostics"]["labels"]) == labels
    # issue 49: recall per label for both annotators, in the hospital's own label names
    split = stage_artifact(work, "split", "test")
    assert split is not None
    test = read_corpus(split)
    tested = {s.label for d in test.documents for s in d.spans}
    assert set(report["gold"]["per_label"]) == set(report["synthetic"]["per_label"]) == tested
    assert tested <= set(RENAMED.values())
    assert all(row["label"] in tested for row in report["synthetic"]["missed_shapes"])
    audit = json.loads((_bundle(work) / "audit.json").read_text(encoding="utf-8"))
    assert set(audit["measures"]["pii_echo"]["after"]["by_label"]) == set(RENAMED.values())
