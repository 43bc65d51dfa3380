"""``run_experiment``: plan the runs, run each through the stage store, resume, report.

1. plan: every study's conditions x repeats, each repeat with its own seeds (see
   ``repeat_by``); every run's site config is built and validated before anything runs;
2. run: each run's stages go through the content-addressed store, so what runs share is
   computed once; a run whose ``result.json`` is complete for the same plan is not run again;
3. report: ``experiment.json``, ``experiment.md`` and a plot per study.

Layout of ``out_dir``: ``store/<stage>/<key>/`` (the computed stages), ``runs/<run id>/``
(``work/`` links into the store, ``result.json``), the reports at the top.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic_core import to_jsonable_python
from rich.console import Console
from rich.progress import Progress, TaskID

from shared.atomic import atomic_write_text
from shared.progress import new_progress
from shared.provenance import config_digest
from shared.records import read_record_file
from site_agent.config import SiteConfig, build_site_config, read_site_toml, resolve_paths
from site_agent.stages.pipeline import check_runnable as preflight
from studies.results import RunResult, collect
from studies.spec import Condition, ExperimentSettings, ExperimentSpec, nest
from studies.stages import RunKnobs, experiment_stages, uses_site_config
from studies.store import StageStore, StoredStage, run_stages_in_store

RESULT_FILE = "result.json"
REPEAT_SEEDS: dict[str, tuple[str, ...]] = {
    "training": (),
    "seed": ("annotator.training.seed", "adapt.seed", "generation.seed"),
    "split": ("annotator.training.seed", "adapt.seed", "generation.seed", "split.seed"),
    "fold": (),
}


@dataclass(frozen=True)
class PlannedRun:
    """One run: a study's condition at one repeat."""

    run_id: str
    study: str
    condition: Condition
    repeat: int


def plan_runs(spec: ExperimentSpec) -> list[PlannedRun]:
    """Every (study, condition, repeat), named ``<study>/<NN>-r<repeat>``."""
    runs = []
    for study in spec.study:
        for index, condition in enumerate(study.expand(spec.experiment.defaults)):
            for repeat in range(spec.experiment.repeats):
                run_id = f"{study.name}/{index:02d}-r{repeat}"
                runs.append(PlannedRun(run_id, study.name, condition, repeat))
    return runs


def _get(config: SiteConfig, dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def run_config(
    site: dict[str, Any], site_path: Path, spec: ExperimentSpec, run: PlannedRun, work_dir: Path
) -> SiteConfig:
    """The site config of one run: the site.toml < experiment overrides < the condition's,
    then the repeat's seeds (each configured seed + repeat)."""
    dotted = {**spec.experiment.overrides, **run.condition.overrides}
    if spec.experiment.tiny_models:  # --quick never loads real weights
        dotted = {k: v for k, v in dotted.items() if not k.endswith(".base_model")}
    dotted["work_dir"] = str(work_dir.resolve())  # not relative to site.toml, as its paths are
    source = f"{site_path} (with run {run.run_id} of the experiment)"
    config = build_site_config(site, source=source, overrides=nest(dotted))
    seeds = REPEAT_SEEDS[spec.experiment.repeat_by]
    if run.repeat and seeds:
        dotted.update({key: _get(config, key) + run.repeat for key in seeds})
        config = build_site_config(site, source=source, overrides=nest(dotted))
    return uses_site_config(resolve_paths(config, site_path.parent))


def knobs_of(spec: ExperimentSpec, run: PlannedRun, config: SiteConfig) -> RunKnobs:
    subset_seed = config.annotator.training.seed
    return RunKnobs(
        condition=run.condition,
        seed=subset_seed + run.repeat,
        subset_seed=subset_seed,
        bootstrap_resamples=spec.experiment.bootstrap_resamples,
        max_test_documents=spec.experiment.max_test_documents,
        fold=(run.repeat, spec.experiment.repeats) if spec.experiment.repeat_by == "fold" else None,
    )


def run_digest(config: SiteConfig, knobs: RunKnobs) -> str:
    """What a run's result depends on; a recorded result with another digest is stale."""
    payload = {"config": config.model_dump(mode="json"), "knobs": to_jsonable_python(knobs)}
    return config_digest(payload)


def read_result(path: Path) -> RunResult | None:
    return read_record_file(RunResult, path)


@contextmanager
def run_bar(progress: Progress, run_id: str, total: int) -> Iterator[TaskID]:
    """A bar for one run (a step per stage); the bars its engines add go when it ends."""
    before = set(progress.task_ids)
    task = progress.add_task(run_id, total=total)
    try:
        yield task
    finally:
        for extra in set(progress.task_ids) - before:
            progress.remove_task(extra)


@dataclass
class Experiment:
    """One experiment being run into ``out_dir``."""

    spec: ExperimentSpec
    site_path: Path
    out_dir: Path
    console: Console

    def __post_init__(self) -> None:
        self.site = read_site_toml(self.site_path)
        self.store = StageStore(self.out_dir / "store")

    def config_of(self, run: PlannedRun) -> SiteConfig:
        work_dir = self.out_dir / "runs" / run.run_id / "work"
        return run_config(self.site, self.site_path, self.spec, run, work_dir)

    def execute(self, run: PlannedRun, progress: Progress) -> tuple[RunResult, bool]:
        """The run's result, and whether it had to run (False: resumed from ``result.json``)."""
        run_dir = self.out_dir / "runs" / run.run_id
        config = self.config_of(run)
        knobs = knobs_of(self.spec, run, config)
        digest = run_digest(config, knobs)
        previous = read_result(run_dir / RESULT_FILE)
        if previous and previous.status == "completed" and previous.run_digest == digest:
            return previous, False
        stages = experiment_stages(knobs)
        began = time.perf_counter()
        outcomes: list[StoredStage] = []
        fields: dict[str, Any] = {}
        status: Literal["completed", "failed"] = "completed"
        error: str | None = None
        with run_bar(progress, run.run_id, len(stages)) as bar:

            def advance(outcome: StoredStage) -> None:
                outcomes.append(outcome)
                progress.advance(bar)

            try:
                records, done = run_stages_in_store(config, stages, self.store, progress, advance)
                folders = {o.name: self.store.folder(o.name, o.key) for o in done}
                fields = collect(records, folders)
            except Exception as exc:  # one failed run must not stop the experiment
                status, error = "failed", f"{type(exc).__name__}: {exc}"
                self.console.print(f"[red]run {run.run_id} failed:[/] {error}", highlight=False)
        result = RunResult(
            run_id=run.run_id,
            study=run.study,
            condition=run.condition.model_dump(mode="json"),
            condition_label=run.condition.label(),
            repeat=run.repeat,
            run_digest=digest,
            status=status,
            error=error,
            stages=[{"name": o.name, "status": o.status, "seconds": o.seconds} for o in outcomes],
            seconds=time.perf_counter() - began,
            **fields,
        )
        atomic_write_text(run_dir / RESULT_FILE, result.model_dump_json(indent=2))
        return result, True


def run_experiment(
    spec: ExperimentSpec,
    site_path: Path,
    out_dir: Path,
    *,
    console: Console | None = None,
    max_runs: int | None = None,
) -> list[RunResult]:
    """Run (or resume) every planned run, then write the reports; returns the results.

    ``max_runs`` stops after that many runs had to run (the rest resume next time).
    """
    from studies.report import write_reports

    console = console or Console(stderr=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    experiment = Experiment(spec, site_path, out_dir, console)
    if spec.experiment.max_corpus_documents:
        sample = corpus_sample(experiment.site, site_path, out_dir, spec.experiment)
        experiment.site = {**experiment.site, "corpus": sample}
    if spec.experiment.tiny_models:
        experiment.site = with_tiny_models(experiment.site, site_path, out_dir / "tiny-models")
    planned = plan_runs(spec)
    for run in planned:  # a bad override or model name fails here, before hours of work
        preflight(experiment.config_of(run), exports=False)  # runs stop at the audit
    results: list[RunResult] = []
    ran = 0
    console.rule(f"[bold]experiment {spec.experiment.name}[/]: {len(planned)} runs")
    with new_progress(console) as progress:
        overall = progress.add_task("runs", total=len(planned))
        for run in planned:
            if max_runs is not None and ran >= max_runs:
                break
            result, executed = experiment.execute(run, progress)
            ran += int(executed)
            results.append(result)
            progress.advance(overall)
    write_reports(spec, results, out_dir)
    return results


def with_tiny_models(site: dict[str, Any], site_path: Path, folder: Path) -> dict[str, Any]:
    """The site.toml with tiny test models (built once per output folder from its corpus) as
    annotator and generator, and no PHI-rate check; for ``--quick`` and CI only."""
    from shared.corpus_io import read_corpus
    from site_agent.models.tiny import tiny_causal_lm, tiny_encoder

    config = resolve_paths(build_site_config(site, source=str(site_path)), site_path.parent)
    encoder, generator = folder / "encoder", folder / "generator"
    if not (encoder / "config.json").exists() or not (generator / "config.json").exists():
        texts = [d.text for d in read_corpus(config.corpus.path, config.corpus.format).documents]
        tiny_encoder(encoder, texts)
        tiny_causal_lm(generator, texts)
    tables: dict[str, dict[str, Any]] = {
        "annotator": {"base_model": str(encoder)},
        "adapt": {"base_model": str(generator)},
        # random weights write no placeholders or tags: the PHI-rate check would stop every run
        "generation": {"min_phi_rate": 0.0},
    }
    return {
        **site,
        **{name: {**site.get(name, {}), **table} for name, table in tables.items()},
        "corpus": {**site.get("corpus", {}), "path": str(config.corpus.path)},
    }


def corpus_sample(
    site: dict[str, Any], site_path: Path, out_dir: Path, settings: ExperimentSettings
) -> dict[str, Any]:
    """The ``[corpus]`` table pointing at a seeded sample of ``max_corpus_documents`` of the
    gold corpus (written once into ``out_dir``; the experiment's scaled-down data)."""
    from shared.corpus_io import read_corpus, write_corpus
    from studies.training_sets import fraction_of

    config = resolve_paths(build_site_config(site, source=str(site_path)), site_path.parent)
    n = settings.max_corpus_documents or 0
    path = out_dir / f"corpus-sample-{n}.jsonl"
    if not path.exists():
        gold = read_corpus(config.corpus.path, config.corpus.format)
        write_corpus(fraction_of(gold, min(1.0, n / max(1, len(gold))), seed=0), path)
    return {**site.get("corpus", {}), "path": str(path.resolve()), "format": "jsonl"}
