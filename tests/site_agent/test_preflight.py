"""The pre-flight names PHI density, notes without PHI, rare labels and the recipe, before
any model trains (``site-agent validate`` and the start of ``synthesize``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import write_corpus
from site_agent.stages.preflight import default_settings, preflight, preflight_lines
from tests.ner.test_recipe import corpus


def _with_rare_label(base: Corpus) -> Corpus:
    fax = Document(
        id="fax", text="Fax 912345678 enviado.", spans=(Span(start=4, end=13, label="FAX"),)
    )
    return Corpus(documents=(*base.documents, fax), labels=("FAX", "NAME"))


def test_preflight_of_a_sparse_corpus_names_density_rare_labels_and_recipe() -> None:
    sparse = _with_rare_label(corpus(30, 300))
    report = preflight(sparse, default_settings())
    assert report.documents == 331
    assert report.documents_without_phi == pytest.approx(300 / 331)
    assert report.mentions == {"FAX": 1, "NAME": 30}
    assert report.rare_labels == ("FAX",)
    assert report.recipe.sparse and report.recipe.phi_free_per_phi == 1.0
    text = "\n".join(preflight_lines(report))
    assert f"PHI density: {report.phi_word_density:.2%} of words" in text
    assert "91% of 331 notes without PHI" in text
    assert "too rare to learn (< 25 mentions): FAX, NAME" not in text
    assert "too rare to learn (< 25 mentions): FAX - left out of the quality gate" in text
    assert "annotator sparse-PHI recipe" in text and "sparse PHI" in text


def test_preflight_of_a_dense_corpus_keeps_every_chunk() -> None:
    report = preflight(corpus(40, 5), default_settings())
    assert not report.recipe.sparse and report.rare_labels == ()
    assert "annotator recipe:" in "\n".join(preflight_lines(report))


def test_validate_command_prints_the_preflight(tmp_path: Path) -> None:
    path = tmp_path / "sparse.jsonl"
    write_corpus(_with_rare_label(corpus(3, 40)), path)
    done = subprocess.run(
        ["site-agent", "validate", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "pre-flight" in out and "PHI density" in out and "91% of 44 notes without PHI" in out
    assert "too rare to learn (< 25 mentions): FAX, NAME" in out
    assert "sparse-PHI recipe" in out


def test_synthesize_prints_the_preflight_before_anything_runs(tmp_path: Path) -> None:
    write_corpus(_with_rare_label(corpus(6, 60)), tmp_path / "c.jsonl")
    (tmp_path / "site.toml").write_text(
        'site_id = "h"\nwork_dir = "w"\ndevice = "cpu"\n[corpus]\npath = "c.jsonl"\n'
        '[adapt]\nbase_model = "no-such-generator"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        ["site-agent", "synthesize", "--site-config", "site.toml"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0  # the unknown generator stops it before any stage
    err = " ".join(done.stderr.split())
    assert err.index("pre-flight") < err.index("no-such-generator")
    assert "PHI density" in err and "notes without PHI" in err
    assert "too rare to learn" in err and "sparse-PHI recipe" in err


def test_validate_prices_the_run_on_the_split_synthesize_will_train_on(tmp_path: Path) -> None:
    """The plan's notes are those of the training split the split stage cuts from the corpus
    (under site.toml's fractions), not of the whole corpus, as ``synthesize`` prices them."""
    from site_agent.config import build_site_config
    from site_agent.stages.split import split_sizes

    path = tmp_path / "c.jsonl"
    write_corpus(corpus(80, 0), path)
    (tmp_path / "site.toml").write_text(
        'site_id = "h"\n[corpus]\npath = "c.jsonl"\n[split]\ntest_fraction = 0.5\n',
        encoding="utf-8",
    )
    for extra, fractions in (([], {}), (["--site-config", "site.toml"], {"test_fraction": 0.5})):
        config = build_site_config(
            {"site_id": "h", "corpus": {"path": str(path)}, "split": fractions}
        )
        n_train = len(split_sizes(config)[0])
        assert n_train < 80
        done = subprocess.run(
            ["site-agent", "validate", "c.jsonl", *extra],
            cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        out = " ".join(done.stdout.split())
        assert f"100% of {n_train} training notes hold PHI" in out
