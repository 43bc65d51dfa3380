"""Issue 30: the audit covers everything the generator saw, prompts included.

The attack that went through: an exported note is prompt + continuation, prompts are the
openings of *validation* notes, and the audit and the gate compared only with the training
split. With a long prompt, a template-mode note was a whole real validation note with its
identifiers swapped, and it was signed. The run below plants exactly that (tiny models, the
30 shortest MEDDOCAN notes, ``prompt_words`` far above the settings' maximum, set behind the
config's back), then checks each defence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from shared.corpus_io import read_corpus
from shared.errors import ExportRefusedError, QualityGateError
from site_agent.config import SiteConfig, build_site_config
from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.pipeline.stage import read_record
from site_agent.stages import audit as audit_stage
from site_agent.stages.export import audit_binding
from site_agent.stages.knobs import tokenizer_reference
from site_agent.stages.pipeline import folder_of, run_pipeline, stage_artifact
from site_agent.stages.registry import STAGES
from tests.meddocan_slice import slice_site

LONG = 400  # words: more than any of the 30 notes has, so a prompt is the whole note
UP_TO_ANNOTATE = tuple(STAGES[: [s.name for s in STAGES].index("annotate") + 1])
INPUTS = (
    ("split", "train"),
    ("split", "validation"),
    ("pseudonymise", "surrogates"),
    ("pseudonymise", "canaries"),
    ("pseudonymise", "membership_canaries"),
    ("annotate", "corpus"),
)


def site_data(root: Path, meddocan_dir: Path) -> dict[str, object]:
    data, _ = slice_site(
        root,
        meddocan_dir,
        "long-prompt",
        adapt={"max_steps": 1},
        generation={
            "mode": "template",
            "samples_per_prompt": 1,
            "max_new_tokens": 4,
            "min_new_tokens": 1,
            "min_phi_rate": 0,  # 4 new tokens of a 1-step tiny model: not what is tested here
        },
        audit={"canaries": 2},
        export={"accept_degenerate": "tiny test models"},
    )
    return data


@pytest.fixture(scope="module")
def planted(
    meddocan_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[SiteConfig, dict[str, Path]]:
    """The pipeline up to machine annotation, with whole validation notes as prompts."""
    root = tmp_path_factory.mktemp("long-prompt")
    config = build_site_config(site_data(root, meddocan_dir))
    long = config.generation.model_copy(update={"prompt_words": LONG})
    config = config.model_copy(update={"generation": long})  # past the settings' maximum
    run_pipeline(config, UP_TO_ANNOTATE)
    inputs = {}
    for stage, artifact in INPUTS:
        path = stage_artifact(config.work_dir, stage, artifact)
        if path is not None:
            inputs[f"{stage}.{artifact}"] = path
    return config, inputs


def shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def carried(texts: list[str], validation: list[str], share: float = 0.5) -> int:
    """How many ``texts`` hold at least ``share`` of some validation note's word 5-grams
    (most of the note: its identifiers are swapped, the rest is verbatim)."""
    notes = [shingles(v) for v in validation if shingles(v)]
    return sum(any(len(note & shingles(t)) >= share * len(note) for note in notes) for t in texts)


def validation_openings(inputs: dict[str, Path]) -> list[str]:
    return [d.text for d in read_corpus(inputs["split.validation"]).documents]


def test_the_plant_works_the_synthetic_notes_carry_validation_notes(
    planted: tuple[SiteConfig, dict[str, Path]],
) -> None:
    _, inputs = planted
    texts = [d.text for d in read_corpus(inputs["annotate.corpus"]).documents]
    assert carried(texts, validation_openings(inputs)) > 0


def test_the_audit_lets_no_validation_note_through(
    planted: tuple[SiteConfig, dict[str, Path]], tmp_path: Path
) -> None:
    config, inputs = planted
    try:
        report, audited = audit_stage.audit_synthetic_notes(
            inputs, config.audit, tokenizer_reference(config), tmp_path
        )
    except QualityGateError:
        return  # the audit failed: nothing is exported
    texts = [d.text for d in read_corpus(audited).documents]
    assert not report.passed or carried(texts, validation_openings(inputs)) == 0


def test_the_gate_refuses_an_audit_that_left_the_prompts_out(
    planted: tuple[SiteConfig, dict[str, Path]], tmp_path: Path
) -> None:
    config, inputs = planted
    train_only = {k: v for k, v in inputs.items() if k != "split.validation"}
    report, corpus = audit_stage.audit_synthetic_notes(
        train_only, config.audit, tokenizer_reference(config), tmp_path, config.signing_key
    )  # the audit as it was: sealed, against the training split alone
    assert report.passed, report.failed_rules
    request = BundleRequest(
        site_id=config.site_id,
        corpus_path=corpus,
        audit_report_path=tmp_path / "audit.json",
        signing_key_path=Path(str(config.signing_key)),
        outbox=tmp_path / "outbox",
        config_digest="x",
        base_models={},
        binding=audit_binding(config, inputs),
    )
    with pytest.raises(ExportRefusedError, match="audit_real_corpus"):
        build_bundle(request)


def test_prompts_are_bounded_in_the_settings() -> None:
    from site_agent.generate.settings import GenerationSettings

    with pytest.raises(ValidationError, match="prompt_words"):
        GenerationSettings(prompt_words=LONG)


def test_the_prompts_origin_is_recorded(planted: tuple[SiteConfig, dict[str, Path]]) -> None:
    config, inputs = planted
    record = read_record(folder_of(config.work_dir, "generate"))
    assert record is not None
    validation = read_corpus(inputs["split.validation"])
    assert record.summary.get("prompt_notes") == len(validation)
    longest = max(len(d.text.split()) for d in validation.documents)
    assert record.summary.get("prompt_words_max") == longest
    origin_file = folder_of(config.work_dir, "generate") / "prompt-origin.json"
    origin = json.loads(origin_file.read_text(encoding="utf-8"))
    assert {o["note"] for o in origin} == {d.id for d in validation.documents}
