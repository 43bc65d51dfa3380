"""The whole site pipeline on a 30-document MEDDOCAN slice (the shortest notes), tiny models.

Every stage runs for real (tiny BERT annotator, tiny Llama generator with LoRA, the privacy
audit, the synthetic encoder, the signed export); then a re-run skips everything and
``--from audit`` restarts there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from shared.corpus_io import read_corpus
from site_agent.config import SiteConfig, build_site_config
from site_agent.export.verify import verify_bundle
from site_agent.pipeline.stage import read_record
from site_agent.pipeline.stage_loop import stage_folder
from site_agent.stages.pipeline import folder_of, run_pipeline, stage_artifact
from site_agent.stages.registry import STAGES
from tests.meddocan_slice import hospital_case, slice_site
from tests.security.scan import leaks, needles


@pytest.fixture(scope="module")
def site(meddocan_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[SiteConfig, Path]:
    root = tmp_path_factory.mktemp("site")
    data, public = slice_site(
        root,
        meddocan_dir,
        "meddocan-slice",
        hospital_case,  # labels in mixed case with hyphens (issue 46)
        adapt={"max_steps": 2},
        # the annotate mode's pipeline: the gold annotator labels the generated notes
        generation={
            "mode": "annotate",
            "samples_per_prompt": 2,
            "max_new_tokens": 24,
            "max_documents": 8,
        },
        audit={"canaries": 2},
        # one adaptation step: the synthetic corpus may hold no spans (issue 15's refusal)
        export={"accept_degenerate": "tiny test models"},
    )
    config = build_site_config(data)
    run_pipeline(config)
    return config, public


def test_every_stage_completes_with_its_artifacts(site: tuple[SiteConfig, Path]) -> None:
    config, _ = site
    for index, stage in enumerate(STAGES, 1):
        record = read_record(stage_folder(config.work_dir, index, stage))
        assert record is not None and record.status == "completed", stage.name
        for name, stored in record.artifacts.items():
            path = Path(stored)
            path = (
                path if path.is_absolute() else stage_folder(config.work_dir, index, stage) / path
            )
            assert path.exists(), f"{stage.name}.{name}"
    generated = read_record(folder_of(config.work_dir, "generate"))
    assert generated is not None and generated.summary["generation_runs"] == 1
    assert generated.summary["seconds_earlier_runs"] == 0
    report_json = stage_artifact(config.work_dir, "train-synthetic", "report")
    report_md = stage_artifact(config.work_dir, "train-synthetic", "report_md")
    assert report_json is not None and report_md is not None
    report = json.loads(report_json.read_text())
    assert set(report["gold"]) >= {"token_f1", "token_recall"}
    assert report["token_f1_gap"] == pytest.approx(
        report["gold"]["token_f1"] - report["synthetic"]["token_f1"]
    )
    assert "Token F1 gap" in report_md.read_text()
    _check_the_diagnosis(config, report, report_md.read_text())


def _check_the_diagnosis(config: SiteConfig, report: dict, page: str) -> None:
    """Issue 49: per-label recall for both annotators and the synthetic one's missed shapes,
    summing to the test split's spans, naming no test identifier."""
    split = stage_artifact(config.work_dir, "split", "test")
    assert split is not None
    test = read_corpus(split)
    spans = [(d.text[s.start : s.end], s.label) for d in test.documents for s in d.spans]
    for annotator in ("gold", "synthetic"):
        rows = report[annotator]["per_label"]
        assert rows and set(rows) == {label for _, label in spans}
        assert sum(r["support"] for r in rows.values()) == len(spans)
        assert all(0.0 <= r["recall"] <= 1.0 for r in rows.values())
        assert all(r["leaked_documents"] <= len(test) for r in rows.values())
    assert report["gold"]["missed_shapes"] is None
    shapes = report["synthetic"]["missed_shapes"]
    assert isinstance(shapes, list) and all(r["count"] >= 1 for r in shapes)
    assert "| label | test spans | gold recall | synthetic recall |" in page
    written = json.dumps(report, ensure_ascii=False) + page
    found = [
        surface
        for surface, _ in spans
        if len(surface) >= 4 and re.search(rf"(?<!\w){re.escape(surface)}(?!\w)", written)
    ]
    assert found == []


def test_bundle_verifies_and_holds_nothing_real(site: tuple[SiteConfig, Path]) -> None:
    config, public = site
    (bundle,) = [p for p in (config.work_dir / "outbox").iterdir() if p.is_dir()]
    manifest = verify_bundle(bundle, public)
    kinds = {a.kind for a in manifest.artifacts}
    assert {"synthetic_corpus", "audit_report", "encoder_weights"} <= kinds
    train = stage_artifact(config.work_dir, "split", "train")
    assert train is not None
    real = train.read_text()
    real_texts = {json.loads(line)["text"] for line in real.splitlines()}
    shipped = (bundle / "synthetic.jsonl").read_text().splitlines()
    assert not {json.loads(line)["text"] for line in shipped} & real_texts
    real_ids = {json.loads(line)["id"] for line in real.splitlines()}
    for path in bundle.rglob("*.json*"):
        text = path.read_text(encoding="utf-8")
        assert not [i for i in real_ids if i in text], path.name
    names = {p.name for p in bundle.rglob("*")}
    assert "surrogates.private.jsonl" not in names and "train.jsonl" not in names


def test_no_exported_file_holds_a_training_sentence_or_gold_pii(
    site: tuple[SiteConfig, Path],
) -> None:
    """Every file of the signed bundle, as bytes, against every training sentence and gold
    PII string of the site's corpus (train, validation and test splits)."""
    config, _ = site
    (bundle,) = [p for p in (config.work_dir / "outbox").iterdir() if p.is_dir()]
    real = read_corpus(config.corpus.path)
    assert needles(real), "the scan needs real strings to look for"
    # the base model is not the site's export (this tiny one drew its vocabulary from the slice)
    base = (Path(config.annotator.base_model),)
    assert leaks(bundle, real, public=base) == []


def test_rerun_skips_and_from_restarts(site: tuple[SiteConfig, Path]) -> None:
    config, _ = site
    assert {r.status for r in run_pipeline(config)} == {"skipped"}
    runs = run_pipeline(config, from_stage="audit")
    assert [r.status for r in runs] == ["skipped"] * 6 + ["ran"] * 3


def test_a_setting_the_generator_does_not_read_keeps_its_notes(
    site: tuple[SiteConfig, Path], tmp_path: Path
) -> None:
    """An audit setting changes the generate stage's digest (the filler follows the audit's
    filter), so the stage runs again: it fills the same notes anew from its kept store
    without generating any. A generator setting starts the store over (no refusal); --from
    empties it."""
    import shutil

    config, _ = site
    work = config.work_dir  # in place (the store's key holds the adapter's path), restored after
    backup = tmp_path / "backup"
    shutil.copytree(work, backup)
    try:
        _keeps_its_notes(config, work)
    finally:
        shutil.rmtree(work)
        shutil.move(backup, work)


def _keeps_its_notes(config: SiteConfig, work: Path) -> None:
    from site_agent.generate.resumable import run_history
    from site_agent.stages.generate import PARTIAL_FILE

    store = folder_of(work, "generate") / PARTIAL_FILE
    notes, history = store.read_bytes(), run_history(store)
    assert history is not None and history.invocations == 1

    filters = config.audit.policy.filters.model_copy(update={"sensitive_ngram_identifiers": "all"})
    policy = config.audit.policy.model_copy(update={"filters": filters})
    audit = config.audit.model_copy(update={"policy": policy})
    strict = config.model_copy(update={"audit": audit})
    runs = {r.name: r for r in run_pipeline(strict)}
    assert runs["generate"].status == "ran" and runs["audit"].status == "ran"
    assert store.read_bytes() == notes and run_history(store) == history  # nothing generated
    record = read_record(folder_of(work, "generate"))
    assert record is not None and record.summary["generation_runs"] == 1

    hotter = strict.model_copy(
        update={"generation": strict.generation.model_copy(update={"top_p": 0.5})}
    )
    assert {r.name: r.status for r in run_pipeline(hotter)}["generate"] == "ran"
    again = run_history(store)
    assert again is not None and again.digest != history.digest and again.invocations == 1

    written = store.stat().st_mtime_ns
    run_pipeline(hotter, from_stage="generate")
    fresh = run_history(store)  # emptied, then generated anew from scratch
    assert fresh is not None and fresh.digest == again.digest and fresh.invocations == 1
    assert store.stat().st_mtime_ns != written


def _toml_ready(value: object) -> object:
    if isinstance(value, dict):
        return {k: _toml_ready(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_ready(v) for v in value]
    return value


def test_the_final_encoder_is_trained_again_over_repeats_from_the_console_script(
    site: tuple[SiteConfig, Path], tmp_path: Path
) -> None:
    """``deid-studies repeats`` on the finished run: three regimes x two seeds, each scored on
    the run's test split, the summary computed from the per-repeat evaluations (paired by
    seed), no weights kept; repeat 0 of real-only and synthetic-only is the site run's own
    annotators; run again, every repeat is found finished, none trained."""
    import subprocess

    import tomli_w

    from protocol.evaluation import EvaluationReport

    config, _ = site
    site_toml = tmp_path / "site.toml"
    site_toml.write_text(tomli_w.dumps(_toml_ready(config.model_dump(mode="json"))))  # type: ignore[arg-type]
    out = tmp_path / "repeats"
    command = ["deid-studies", "repeats", "--site-config", str(site_toml), "--repeats", "2"]
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count(": trained, token F1") == 4
    assert done.stderr.count(": the site run's own annotator, token F1") == 2
    # the estimate, before training
    assert "4 of 6 trainings to run (2 are the site run's own annotators), about" in done.stderr
    table = json.loads((out / "repeats.json").read_text())
    seed = config.annotator.training.seed
    # repeat by repeat: a run stopped early has every regime at about the same count
    order = re.findall(r"^(\S+) seed (\d+): ", done.stderr, flags=re.MULTILINE)
    regimes = ["real-only", "synthetic-only", "augmentation"]
    assert order == [(r, str(s)) for s in (seed, seed + 1) for r in regimes]
    assert table["finished"] == {"repeats": 6, "planned": 6}
    assert "Partial" not in (out / "repeats.md").read_text()
    assert set(table["regimes"]) == {"real-only", "synthetic-only", "augmentation"}
    f1: dict[str, dict[int, float]] = {}
    for regime, row in table["regimes"].items():
        assert row["seeds"] == [seed, seed + 1] and row["token_f1"]["n"] == 2
        for s in row["seeds"]:
            folder = out / regime / f"seed-{s}"
            if s in row["from_site_run"]:
                assert not folder.exists()
                mine = folder_of(config.work_dir, "train-synthetic") / (
                    "evaluation_gold.json" if regime == "real-only" else "evaluation_synthetic.json"
                )
                report = EvaluationReport.model_validate_json(mine.read_text())
            else:
                report = EvaluationReport.model_validate_json(
                    (folder / "evaluation.json").read_text()
                )
                assert not (folder / "model").exists() and not (folder / "model.resume").exists()
            f1.setdefault(regime, {})[s] = report.token.micro.f1
        assert row["token_f1"]["mean"] == pytest.approx(sum(f1[regime].values()) / 2)
    own = {r: row["from_site_run"] for r, row in table["regimes"].items()}
    assert own == {"real-only": [seed], "synthetic-only": [seed], "augmentation": []}
    assert table["regimes"]["real-only"]["n_synthetic"] == 0
    assert table["regimes"]["synthetic-only"]["n_real"] == 0
    aug = table["regimes"]["augmentation"]
    assert aug["n_real"] == table["regimes"]["real-only"]["n_real"] and aug["n_synthetic"] > 0
    paired = [f1["augmentation"][s] - f1["real-only"][s] for s in (seed, seed + 1)]
    assert aug["token_f1_minus_real_only"]["values"] == pytest.approx(paired)
    assert "audit_passed" in table["privacy"]
    md = (out / "repeats.md").read_text()
    assert "| synthetic-only | 2 |" in md
    assert f"not trained again: real-only seed {seed}; synthetic-only seed {seed}." in md

    again = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count(": found finished") == 4 and ": trained" not in again.stderr
    assert "0 of 6 trainings to run (2 are the site run's own annotators)" in again.stderr


def test_repeat_zero_of_real_and_synthetic_only_reproduces_the_site_runs_own_annotators(
    site: tuple[SiteConfig, Path], tmp_path: Path
) -> None:
    """The oracle behind taking the run's own annotators as repeat 0: trained by the repeats
    with the annotator's seed, real-only and synthetic-only score exactly what the run's
    gold and synthetic annotators scored on the test split. ``own_models`` gives them only
    for the settings and audited corpus the run trained with."""
    from dataclasses import replace

    from protocol.evaluation import EvaluationReport
    from studies.final_encoder import (
        own_models,
        plan_repeats,
        run_repeats,
        site_run,
        train_with_encoder,
        write_report,
    )

    config, _ = site
    run = site_run(config.work_dir)
    own = own_models(run, config.annotator)
    assert set(own) == {"real-only", "synthetic-only"}
    planned, test = plan_repeats(
        run, config.annotator.training, tmp_path, 1, ("real-only", "synthetic-only")
    )
    assert all(p.finished is None for p in planned)  # nothing given: both are trained
    trainer = train_with_encoder(config.annotator.base_model, None)
    same = {"provenance": {"created_at"}}  # everything but when it was written
    results = run_repeats(planned, test, trainer)
    for repeat in results:
        mine: EvaluationReport = own[repeat.regime]
        assert repeat.evaluation.model_dump(exclude=same) == mine.model_dump(exclude=same)

    # a run stopped after its first training: the report covers it and says so
    json_path, md_path = write_report(run, results[:1], tmp_path / "partial", "t", len(planned))
    assert json.loads(json_path.read_text())["finished"] == {"repeats": 1, "planned": 2}
    assert "**Partial:** 1 of 2 trainings finished" in md_path.read_text()

    other_seed = config.annotator.model_copy(
        update={"training": config.annotator.training.model_copy(update={"seed": 7})}
    )
    assert own_models(run, other_seed) == {}
    other_corpus = tmp_path / "other.jsonl"
    other_corpus.write_text(run.synthetic.read_text() + "\n")
    assert own_models(replace(run, synthetic=other_corpus), config.annotator) == {}
    assert own_models(replace(run, site_report=None), config.annotator) == {}


def test_repeats_of_an_unfinished_run_exit_2_naming_the_command(tmp_path: Path) -> None:
    import subprocess

    site_toml = tmp_path / "site.toml"
    work = tmp_path / "work"
    site_toml.write_text(f'site_id = "x"\nwork_dir = "{work}"\n[corpus]\npath = "c.jsonl"\n')
    done = subprocess.run(
        ["deid-studies", "repeats", "--site-config", str(site_toml)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "the split stage has not completed" in done.stderr
    assert "site-agent synthesize" in done.stderr
    assert not (work / "repeats").exists()


def test_a_resumed_run_is_told_what_is_left_of_the_estimate(
    site: tuple[SiteConfig, Path], tmp_path: Path
) -> None:
    """Finished stages under the same settings cost nothing more, a stopped generation its
    unsaved share; --from and changed settings bring stages back in full. Files only read."""
    import shutil

    from site_agent.stages.left_to_run import audited_notes, left_to_run
    from site_agent.stages.preflight import run_preflight

    config, _ = site
    plan = run_preflight(config)
    assert plan is not None
    hours = {s.stage: s.hours for s in plan.stages}
    names = [s.name for s in STAGES]
    finished = left_to_run(plan, config)
    assert finished.done == tuple(names) and finished.hours == 0 and finished.partly == ()

    again = left_to_run(plan, config, from_stage="generate")
    assert again.done == tuple(names[: names.index("generate")]) and again.partly == ()
    assert again.hours == pytest.approx(sum(hours[n] for n in names[names.index("generate") :]))

    changed = config.model_copy(
        update={"generation": config.generation.model_copy(update={"top_p": 0.5})}
    )
    moved = left_to_run(plan, changed)  # the old notes are not kept for other settings
    later = names[names.index("generate") :]
    assert moved.done == tuple(names[: names.index("generate")]) and moved.partly == ()
    # the stages that read the new notes run again too, though their own settings are the same
    assert moved.hours == pytest.approx(sum(hours[n] for n in later))
    filters = config.audit.policy.filters.model_copy(update={"sensitive_ngram_identifiers": "all"})
    strict = config.audit.model_copy(
        update={"policy": config.audit.policy.model_copy(update={"filters": filters})}
    )
    refill = left_to_run(plan, config.model_copy(update={"audit": strict}))
    stored = len(
        (folder_of(config.work_dir, "generate") / "generation.partial.jsonl")
        .read_text()
        .splitlines()
    )
    assert refill.partly == (f"generate: {stored} of {plan.generation.notes} notes on disk",)
    assert refill.done == tuple(names[: names.index("generate")])  # annotate reads new notes

    audit = read_record(folder_of(config.work_dir, "audit"))
    assert audit is not None and audited_notes(config) == audit.summary["kept"] > 0
    assert audited_notes(config, from_stage="audit") is None  # it runs again
    assert audited_notes(config, from_stage="train-synthetic") == audit.summary["kept"]
    policy = config.audit.policy.model_copy(update={"name": "another policy"})
    other = config.audit.model_copy(update={"policy": policy})
    assert audited_notes(config.model_copy(update={"audit": other})) is None

    stopped = tmp_path / "work"  # a run killed in generation: the stages before it finished
    for name in names[: names.index("generate")]:
        shutil.copytree(folder_of(config.work_dir, name), folder_of(stopped, name))
    partial = folder_of(stopped, "generate") / "generation.partial.jsonl"
    partial.parent.mkdir(parents=True)
    source = folder_of(config.work_dir, "generate") / "generation.partial.jsonl"
    lines = source.read_text().splitlines(keepends=True)
    partial.write_text("".join(lines[:3]) + lines[3][:10])  # three notes and a torn line
    before = partial.read_bytes()
    half = left_to_run(plan, config.model_copy(update={"work_dir": stopped}))
    notes = plan.generation.notes
    assert half.done == tuple(names[: names.index("generate")])
    assert half.partly == (f"generate: 3 of {notes} notes on disk",)
    assert half.hours == pytest.approx(sum(hours[n] for n in later) - hours["generate"] * 3 / notes)
    shutil.rmtree(folder_of(stopped, "adapt"))  # a new adapter: the saved notes are not its
    fresh = left_to_run(plan, config.model_copy(update={"work_dir": stopped}))
    assert fresh.partly == () and "adapt" not in fresh.done
    assert partial.read_bytes() == before  # the torn line is left to the run itself
    shutil.rmtree(stopped)


def test_the_console_script_says_what_is_left_before_running(
    site: tuple[SiteConfig, Path], tmp_path: Path
) -> None:
    import subprocess

    import tomli_w

    config, _ = site
    site_toml = tmp_path / "site.toml"
    site_toml.write_text(tomli_w.dumps(_toml_ready(config.model_dump(mode="json"))))  # type: ignore[arg-type]
    done = subprocess.run(
        ["site-agent", "synthesize", "--site-config", str(site_toml)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    said = " ".join(done.stderr.split())
    assert "left to run in this work dir: about 0.0 h (done: split, pseudonymise," in said
    assert said.index("left to run") < said.index("split: unchanged, skipped")
    # a redirected log gets the closing table whole and the paths on their own lines
    assert "…" not in done.stderr
    lines = done.stderr.splitlines()
    assert any(ln.startswith("site report: /") and ln.endswith("site_report.md") for ln in lines)


def test_the_hospitals_label_names_reach_the_annotator_and_the_export(
    site: tuple[SiteConfig, Path],
) -> None:
    """Issue 46: the slice's labels are written in mixed case with hyphens; the exported
    encoder tags in them and the shipped corpus and site report name nothing else."""
    config, _ = site
    bundle = stage_artifact(config.work_dir, "export", "bundle")  # earlier tests re-export
    assert bundle is not None
    scheme = {s.label for d in read_corpus(config.corpus.path).documents for s in d.spans}
    assert "Nombre-Sujeto-Asistencia" in scheme
    tags = json.loads((bundle / "encoder" / "config.json").read_text())["id2label"].values()
    assert {t[2:] for t in tags if t != "O"} == scheme
    shipped = read_corpus(bundle / "synthetic.jsonl")
    assert {s.label for d in shipped.documents for s in d.spans} <= scheme
    report = json.loads((bundle / "site_report.json").read_text())
    assert set(report["real_diagnostics"]["labels"]) <= scheme


def test_the_probe_of_issue_11_cannot_export_the_training_split(
    site: tuple[SiteConfig, Path],
) -> None:
    """Last in the module: it leaves the shared run's audit forged and its export refused.

    ``audit --real <unrelated> --synthetic <split.train> --out <audit folder>``, then export: the
    audit stage sees its files changed and runs again; with stage.json forged to match, the
    export gate refuses the report: it lacks the audit stage's seal (and, without the seal,
    the re-derived real-text hash would refuse it: tests/security/test_export_gate.py)."""
    from protocol import Corpus, Document
    from shared.corpus_io import read_corpus
    from shared.errors import ExportRefusedError
    from site_agent.audit.corpus_audit import run_audit
    from site_agent.audit.policy import AuditPolicy
    from site_agent.pipeline.stage_loop import artifacts_on_disk

    config, _ = site
    audit_dir = folder_of(config.work_dir, "audit")
    train_path = stage_artifact(config.work_dir, "split", "train")
    assert train_path is not None
    train = read_corpus(train_path)
    unrelated = Corpus(documents=(Document(id="u", text="lorem ipsum dolor sit amet"),))

    def probe() -> None:
        run_audit(unrelated, train, AuditPolicy(), audit_dir)

    probe()
    runs = run_pipeline(config, from_stage="export")
    # the audit re-ran honestly (same result, so train-synthetic stays valid), export too
    assert [r.status for r in runs][6:] == ["ran", "skipped", "ran"]
    probe()
    record = read_record(audit_dir)
    assert record is not None
    forged = record.model_copy(update={"artifact_hashes": artifacts_on_disk(record, audit_dir)})
    (audit_dir / "stage.json").write_text(forged.model_dump_json())
    with pytest.raises(ExportRefusedError, match="'audit_seal'"):
        run_pipeline(config, from_stage="export")
