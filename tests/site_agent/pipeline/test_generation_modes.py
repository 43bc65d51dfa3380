"""``tagged`` and ``template`` generation end to end (tiny models, 30 short MEDDOCAN notes):
every stage completes, the spans come from the generator (not the annotator), the privacy
audit runs on the mode's corpus, and the mode is recorded in stage.json and provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.corpus_io import read_corpus
from site_agent.adapt.output_vocabulary import VOCABULARY_FILE
from site_agent.adapt.recipe import choose_vocabulary
from site_agent.config import SiteConfig, build_site_config
from site_agent.generate.merge import adds_tokens
from site_agent.generate.tags import TAG
from site_agent.pipeline.stage import read_record
from site_agent.plan.estimate import generation_engine, samples_restricted
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.stages.pipeline import folder_of, run_pipeline, stage_artifact
from site_agent.stages.registry import STAGES
from tests.meddocan_slice import hospital_case, slice_site


@pytest.fixture(scope="module", params=["tagged", "template"])
def site(
    request: pytest.FixtureRequest, meddocan_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> SiteConfig:
    mode: str = request.param
    root = tmp_path_factory.mktemp(f"site-{mode}")
    # the adapt stage adds the mode's tags or placeholders to the tiny tokenizer as whole tokens
    data, _ = slice_site(
        root,
        meddocan_dir,
        f"meddocan-{mode}",
        hospital_case,  # labels in mixed case with hyphens (issue 46)
        adapt={"max_steps": 2},
        generation={
            "mode": mode,
            "min_phi_rate": 0.0,  # a tiny random generator writes no markers to check
            "samples_per_prompt": 2,
            "max_new_tokens": 24,
            "max_documents": 8,
        },
        audit={"canaries": 2},
        # tiny models: the synthetic-trained encoder learns next to nothing (issue 15's refusal)
        export={"accept_degenerate": "tiny test models"},
    )
    config = build_site_config(data)
    run_pipeline(config)
    return config


def test_every_stage_completes_and_records_the_mode(site: SiteConfig) -> None:
    for stage in STAGES:
        record = read_record(folder_of(site.work_dir, stage.name))
        assert record is not None and record.status == "completed", stage.name
    mode = site.generation.mode
    for name in ("adapt", "generate", "annotate"):
        record = read_record(folder_of(site.work_dir, name))
        assert record is not None and record.summary["mode"] == mode, name
    adapter = stage_artifact(site.work_dir, "adapt", "adapter")
    assert adapter is not None and adds_tokens(adapter)  # the mode's markers, whole tokens
    annotate = read_record(folder_of(site.work_dir, "annotate"))
    assert annotate is not None and annotate.summary["spans_from"] == "generator"
    audit = read_record(folder_of(site.work_dir, "audit"))
    assert audit is not None and audit.summary


def test_the_recipe_is_recorded_in_adapt_json_and_the_phi_check_in_stage_json(
    site: SiteConfig,
) -> None:
    result = json.loads((folder_of(site.work_dir, "adapt") / "adapt.json").read_text())
    recipe = result["recipe"]
    assert recipe["mode"] == site.generation.mode and len(recipe["reasons"]) == 6
    assert "batch_size = 2, max_length = 64 set" in recipe["reasons"][1]  # site.toml wins
    assert "max_steps = 2 set" in recipe["reasons"][3] and result["steps"] == 2
    # the output vocabulary is the recipe's for the engine this machine would generate on
    engine = generation_engine(site)
    chosen, _why = choose_vocabulary(
        site.adapt, engine, samples_restricted=samples_restricted(engine)
    )
    assert recipe["vocabulary"] == chosen
    restricted = (Path(result["adapter_dir"]) / VOCABULARY_FILE).is_file()
    assert restricted == (chosen == "corpus") == (result["vocabulary_size"] is not None)
    assert result["phi_windows"] is not None and result["seen_windows"] >= result["phi_windows"]
    adapt = read_record(folder_of(site.work_dir, "adapt"))
    assert adapt is not None and adapt.summary["steps"]["run"] == result["steps"] == 2
    assert adapt.summary["steps"]["estimated"] == recipe["steps"]
    generate = read_record(folder_of(site.work_dir, "generate"))
    assert generate is not None and generate.summary["phi_rate"] == "not checked"  # rate 0


def test_the_generators_spans_reach_the_audit_unchanged(site: SiteConfig) -> None:
    generated_path = stage_artifact(site.work_dir, "generate", "corpus")
    annotated_path = stage_artifact(site.work_dir, "annotate", "corpus")
    assert generated_path is not None and annotated_path is not None
    generated, annotated = read_corpus(generated_path), read_corpus(annotated_path)
    assert [(d.text, d.spans) for d in annotated.documents] == [
        (d.text, d.spans) for d in generated.documents
    ]
    assert annotated.provenance.notes["mode"] == site.generation.mode
    assert annotated.provenance.notes["spans_from"] == "generator"
    assert any(d.spans for d in annotated.documents)  # prompts carry tags or placeholders
    real = stage_artifact(site.work_dir, "split", "train")
    assert real is not None
    scheme = {s.label for d in read_corpus(real).documents for s in d.spans}
    assert "Nombre-Sujeto-Asistencia" in scheme  # the hospital's own label names, read back
    assert {s.label for d in annotated.documents for s in d.spans} <= scheme
    for doc in annotated.documents:  # every marker was read (or the note refused)
        assert not TAG.search(doc.text) and "{{" not in doc.text


def test_the_template_filler_counts_the_identifying_ngrams_the_audit_would_drop(
    site: SiteConfig,
) -> None:
    if site.generation.mode != "template":
        pytest.skip("only the template mode fills placeholders")
    record = read_record(folder_of(site.work_dir, "generate"))
    assert record is not None
    left = record.summary["identifying_ngrams_left"]
    corpus_path = stage_artifact(site.work_dir, "generate", "corpus")
    real_path = stage_artifact(site.work_dir, "split", "train")
    assert corpus_path is not None and real_path is not None
    # the index the stage built: the real split's identifying n-grams, in words and in the
    # generator's tokens, as the audit policy's filter counts them
    index = IdentifyingIndex.build(
        read_corpus(real_path).documents, site.audit.policy.filters, site.adapt.base_model
    )
    shared = index.hits(read_corpus(corpus_path).documents)
    assert int(shared.sum()) <= left  # the corpus keeps some of the filled notes
    assert record.summary["documents_with_identifying_ngrams"] >= int((shared > 0).sum())
    # and the audit's filter, run on the same notes, flags exactly the notes the index finds
    audit = json.loads((folder_of(site.work_dir, "audit") / "audit.json").read_text())
    assert audit["flagged_by_reason"]["sensitive_ngram"] == int((shared > 0).sum())
