"""A finished site run's final encoder, trained again over repeats under three regimes.

``site-agent synthesize`` trains one synthetic annotator with one seed. Whether synthetic
notes can stand in for real ones needs the spread over training repeats, beside the encoder
trained on the real notes and the one trained on both:

- ``real-only``: the gold annotator's recipe (the real training split, validated on the real
  validation split) with seed + k;
- ``synthetic-only``: the site pipeline's train-synthetic recipe (every note the privacy audit
  kept, validated on a seeded share of them, so nothing real shapes the model) with seed + k;
- ``augmentation``: every real note plus audited synthetic ones making up
  ``synthetic_fraction`` of the set (0.75: the best point of the 100-note augmentation sweep,
  docs/results.md), validated on the real validation split.

Repeat ``k`` trains with the annotator's seed + ``k``; every regime uses the same seeds, so
the differences are paired. Repeat 0 of real-only and of synthetic-only is exactly what the
site run trained (same sets, settings and seed), so when the run's train-synthetic stage
scored its two annotators with these settings on this audited corpus, their evaluations are
taken as those repeats instead of training them again (about a fifth of the trainings).
Each model is scored on the run's test split (``shared.metrics.evaluate``: token F1 by
seqeval, exact and overlap span F1, document leakage, per-label recall); the weights are not
kept. Every finished (regime, repeat) is written as it ends and not trained again; a stopped
training resumes after its last epoch (``ner.resume``). The privacy figures are the run's own
audit's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import Progress

from protocol import Corpus
from protocol.annotator import AnnotatorSettings
from protocol.audit import AuditReport
from protocol.evaluation import EvaluationReport
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from shared.errors import UsageError
from shared.metrics.repeats import RepeatSummary, summarise_repeats
from shared.provenance import config_digest, sha256_file
from shared.records import read_record_file
from studies.results import privacy_figures, utility
from studies.spec import Condition
from studies.training_sets import Pools, training_set

if TYPE_CHECKING:
    from site_agent.annotator.settings import GoldAnnotatorSettings

REGIMES = ("real-only", "synthetic-only", "augmentation")
AUGMENTATION_FRACTION = 0.75
REFERENCE = "real-only"
HEADLINES = ("token_f1", "exact_f1", "overlap_f1", "leakage_rate")


@dataclass(frozen=True)
class SiteRun:
    """The files of a finished site run that the repeats read."""

    train: Path
    validation: Path
    test: Path
    synthetic: Path
    audit: Path
    site_report: Path | None = None  # train-synthetic's, beside its two test evaluations


def site_run(work_dir: Path) -> SiteRun:
    """The split and audit of the finished run in ``work_dir`` (and its train-synthetic
    report when that stage has run); a UsageError naming the missing stage and the command
    that makes it otherwise."""
    from site_agent.stages.pipeline import stage_artifact

    wanted = {
        "train": ("split", "train"),
        "validation": ("split", "validation"),
        "test": ("split", "test"),
        "synthetic": ("audit", "corpus"),
        "audit": ("audit", "report"),
    }
    found: dict[str, Path] = {}
    for field, (stage, artifact) in wanted.items():
        path = stage_artifact(work_dir, stage, artifact)
        if path is None or not path.exists():
            raise UsageError(
                f"{work_dir}: the {stage} stage has not completed (no {artifact}); fix: run "
                "`site-agent synthesize --site-config <the same site.toml>` to its end first"
            )
        found[field] = path
    report = stage_artifact(work_dir, "train-synthetic", "report")
    return SiteRun(**found, site_report=report if report and report.exists() else None)


OWN_MODELS = {"real-only": "gold", "synthetic-only": "synthetic"}
"""The regime whose repeat 0 each of the site run's own annotators is."""


def own_models(run: SiteRun, settings: GoldAnnotatorSettings) -> dict[str, EvaluationReport]:
    """The test evaluations of the site run's own annotators, by regime, when its
    train-synthetic stage trained them with ``settings`` on this audited corpus; empty
    otherwise (the run's config changed since, or the stage has not run)."""
    from site_agent.stages.train_synthetic import evaluation_file, trained_with
    from site_agent.train_synthetic.report import SiteReport

    if run.site_report is None:
        return {}
    report = read_record_file(SiteReport, run.site_report)
    if report is None or report.trained_on_corpus_sha256 != sha256_file(run.synthetic):
        return {}
    if json.dumps(report.settings, sort_keys=True) != json.dumps(
        trained_with(settings), sort_keys=True, default=list
    ):
        return {}
    found = {}
    for regime, annotator in OWN_MODELS.items():
        path = run.site_report.parent / evaluation_file(annotator)
        evaluation = read_record_file(EvaluationReport, path)
        if evaluation is not None:
            found[regime] = evaluation
    return found


TRAINED, SITE_RUN = "trained", "site run"


@dataclass(frozen=True)
class Repeat:
    """One scored model: trained by the repeats (``origin`` "trained") or the site run's
    own annotator (``origin`` "site run")."""

    regime: str
    seed: int
    evaluation: EvaluationReport
    n_real: int
    n_synthetic: int
    origin: str = TRAINED


Trainer = Callable[[Corpus, Corpus, AnnotatorSettings, Path], Path]
"""(train, validation, settings, out_dir) -> the trained model's folder."""


def _train_and_score(
    train: Corpus, validation: Corpus, test: Corpus, settings: AnnotatorSettings,
    folder: Path, trainer: Trainer, progress: Progress | None,
) -> EvaluationReport:  # fmt: skip
    import shutil

    from shared.metrics import evaluate
    from site_agent.annotator.encoder import annotate_corpus
    from site_agent.train_synthetic.sets import without_spans

    model = trainer(train, validation, settings, folder / "model")
    report: EvaluationReport = evaluate(test, annotate_corpus(model, without_spans(test), progress))
    shutil.rmtree(model, ignore_errors=True)  # the evaluation is the result (~0.5 GB a model)
    return report


@dataclass(frozen=True)
class Planned:
    """One (regime, repeat): its seeded settings, folder, key and training and validation sets
    (the sets are drawn only for repeats not finished yet)."""

    regime: str
    settings: AnnotatorSettings
    folder: Path
    key: str
    finished: Repeat | None
    train: Corpus | None = None
    validation: Corpus | None = None
    n_real: int = 0
    n_synthetic: int = 0


def _real_only(sets: _Sets, seed: int) -> tuple[Corpus, Corpus, int, int]:
    """The gold annotator's sets."""
    return sets.real, sets.real_validation, len(sets.real), 0


def _synthetic_only(sets: _Sets, seed: int) -> tuple[Corpus, Corpus, int, int]:
    """The train-synthetic stage's sets."""
    from site_agent.train_synthetic.sets import synthetic_train_validation

    train, validation = synthetic_train_validation(sets.synthetic, seed)
    return train, validation, 0, len(sets.synthetic)


def _augmentation(sets: _Sets, seed: int) -> tuple[Corpus, Corpus, int, int]:
    """Every real note and audited ones making up ``fraction`` of the set."""
    pools = Pools(real=sets.real, synthetic=sets.synthetic, n_train_split=len(sets.real), seed=seed)
    condition = Condition(regime="augmentation", synthetic_fraction=sets.fraction)
    built = training_set(pools, condition)
    return built.corpus, sets.real_validation, built.n_real, built.n_synthetic


@dataclass(frozen=True)
class _Sets:
    real: Corpus
    synthetic: Corpus
    real_validation: Corpus
    fraction: float


BUILDERS: dict[str, Callable[[_Sets, int], tuple[Corpus, Corpus, int, int]]] = {
    "real-only": _real_only,
    "synthetic-only": _synthetic_only,
    "augmentation": _augmentation,
}
"""Each regime's (train, validation, real notes, synthetic notes) for a seed."""


def plan_repeats(
    run: SiteRun,
    settings: AnnotatorSettings,
    out: Path,
    repeats: int = 3,
    regimes: Sequence[str] = REGIMES,
    fraction: float = AUGMENTATION_FRACTION,
    own: Mapping[str, EvaluationReport] | None = None,
) -> tuple[list[Planned], Corpus]:
    """Every (regime, repeat), repeat by repeat (each repeat's regimes before the next
    repeat, so a run stopped early has every regime at about the same number of repeats),
    finished ones read back from ``out`` and repeat 0 of a regime in ``own``
    (``own_models``) taken from the site run; and the test split they are scored on."""
    unknown = sorted(set(regimes) - set(REGIMES))
    if unknown:
        raise UsageError(f"unknown regime(s) {unknown}; fix: choose from {list(REGIMES)}")
    real, synthetic = read_corpus(run.train), read_corpus(run.synthetic)
    real_validation, test = read_corpus(run.validation), read_corpus(run.test)
    sets = _Sets(real, synthetic, real_validation, fraction)
    inputs = [config_digest(c) for c in (real, synthetic, real_validation, test)]
    own = own or {}
    planned = []
    for k in range(repeats):
        for regime in regimes:
            seeded = settings.model_copy(update={"seed": settings.seed + k})
            folder = out / regime / f"seed-{seeded.seed}"
            key = config_digest([regime, fraction, config_digest(seeded), inputs])
            done = _finished(folder, key)
            if done is not None:
                planned.append(Planned(regime, seeded, folder, key, done))
                continue
            train, validation, n_real, n_synthetic = BUILDERS[regime](sets, seeded.seed)
            if k == 0 and regime in own:
                mine = Repeat(regime, seeded.seed, own[regime], n_real, n_synthetic, SITE_RUN)
                planned.append(Planned(regime, seeded, folder, key, mine))
                continue
            planned.append(
                Planned(regime, seeded, folder, key, None, train, validation, n_real, n_synthetic)
            )
    return planned, test


def run_repeats(
    planned: Sequence[Planned],
    test: Corpus,
    trainer: Trainer,
    progress: Progress | None = None,
    on_repeat: Callable[[Repeat, bool], None] | None = None,
) -> list[Repeat]:
    """Train and score every planned repeat not finished yet; all of them back.
    ``on_repeat(repeat, trained_now)`` is told of each, trained now or found finished."""
    results = []
    for plan in planned:
        done = plan.finished
        if done is None:
            assert plan.train is not None and plan.validation is not None
            report = _train_and_score(
                plan.train, plan.validation, test, plan.settings, plan.folder, trainer, progress
            )
            done = Repeat(plan.regime, plan.settings.seed, report, plan.n_real, plan.n_synthetic)
            _write(plan.folder, plan.key, done)
        results.append(done)
        if on_repeat is not None:
            on_repeat(done, plan.finished is None)
    return results


EVALUATION_FILE = "evaluation.json"
TRAINED_FILE = "trained.json"


def _write(folder: Path, key: str, repeat: Repeat) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / EVALUATION_FILE, repeat.evaluation.model_dump_json(indent=2))
    meta = {"key": key, "regime": repeat.regime, "seed": repeat.seed}
    meta |= {"n_real": repeat.n_real, "n_synthetic": repeat.n_synthetic}
    atomic_write_text(folder / TRAINED_FILE, json.dumps(meta, indent=2))  # written last


def _finished(folder: Path, key: str) -> Repeat | None:
    """The repeat saved in ``folder`` for exactly these inputs and settings; None otherwise."""
    try:
        meta = json.loads((folder / TRAINED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    report = read_record_file(EvaluationReport, folder / EVALUATION_FILE)
    if not isinstance(meta, dict) or meta.get("key") != key or report is None:
        return None
    return Repeat(meta["regime"], meta["seed"], report, meta["n_real"], meta["n_synthetic"])


def summary(
    results: Sequence[Repeat], audit: AuditReport | None = None, seed: int = 0
) -> dict[str, Any]:
    """Per regime: each headline's mean, SD and 95% bootstrap CI over the repeats, per-label
    overlap recall; against real-only: the ratio of mean token F1 and the paired
    differences (same seed) of token F1 and document leakage; the audit's figures."""
    by_regime: dict[str, list[Repeat]] = {}
    for repeat in results:
        by_regime.setdefault(repeat.regime, []).append(repeat)
    out: dict[str, Any] = {"regimes": {}}
    for regime, runs in by_regime.items():
        figures = [utility(r.evaluation) for r in runs]
        labels = sorted({lab for r in runs for lab in r.evaluation.overlap.per_label})
        out["regimes"][regime] = {
            "repeats": len(runs),
            "seeds": [r.seed for r in runs],
            "n_real": runs[0].n_real,
            "n_synthetic": runs[0].n_synthetic,
            "from_site_run": [r.seed for r in runs if r.origin == SITE_RUN],
            **{
                name: summarise_repeats([f[name] for f in figures], seed=seed).model_dump()
                for name in HEADLINES
            },
            "per_label_recall": {label: _mean_recall(runs, label) for label in labels},
        }
    reference = {r.seed: utility(r.evaluation) for r in by_regime.get(REFERENCE, [])}
    for regime, runs in by_regime.items():
        if regime == REFERENCE or not reference:
            continue
        paired = [(utility(r.evaluation), reference[r.seed]) for r in runs if r.seed in reference]
        if not paired:
            continue
        row = out["regimes"][regime]
        row["token_f1_share_of_real_only"] = (
            row["token_f1"]["mean"] / out["regimes"][REFERENCE]["token_f1"]["mean"]
        )
        for name in ("token_f1", "leakage_rate"):
            diffs = [mine[name] - theirs[name] for mine, theirs in paired]
            row[f"{name}_minus_real_only"] = summarise_repeats(diffs, seed=seed).model_dump()
    if audit is not None:
        out["privacy"] = privacy_figures(audit)
    return out


def _mean_recall(runs: Sequence[Repeat], label: str) -> float:
    values = [
        r.evaluation.overlap.per_label[label].recall
        for r in runs
        if label in r.evaluation.overlap.per_label
    ]
    return sum(values) / len(values)


def _cell(stats: dict[str, Any]) -> str:
    s = RepeatSummary.model_validate(stats)
    return f"{s.mean:.3f} ± {s.sd:.3f} [{s.low:.3f}, {s.high:.3f}]"


def markdown(table: dict[str, Any], title: str) -> str:
    """The summary as a Markdown report: one row per regime, then per-label recall."""
    regimes = table["regimes"]
    lines = [
        f"# {title}",
        "",
        "Mean ± SD over training repeats [95% bootstrap CI of the mean].",
        "",
    ]
    done = table.get("finished", {})
    if done and done["repeats"] < done["planned"]:
        lines += [
            f"**Partial:** {done['repeats']} of {done['planned']} trainings finished; run the "
            "same command again to go on.",
            "",
        ]
    lines += ["| regime | repeats | real / synthetic notes | " + " | ".join(HEADLINES) + " |"]
    lines += ["|---" * (3 + len(HEADLINES)) + "|"]
    for regime, row in regimes.items():
        cells = [_cell(row[name]) for name in HEADLINES]
        sizes = f"{row['n_real']} / {row['n_synthetic']}"
        lines.append(f"| {regime} | {row['repeats']} | {sizes} | " + " | ".join(cells) + " |")
    reused = [(r, row["from_site_run"]) for r, row in regimes.items() if row.get("from_site_run")]
    if reused:
        said = "; ".join(f"{r} seed {', '.join(map(str, seeds))}" for r, seeds in reused)
        lines += ["", f"Taken from the site run's own annotators, not trained again: {said}."]
    paired = [(r, row) for r, row in regimes.items() if "token_f1_minus_real_only" in row]
    if paired:
        lines += ["", f"Against {REFERENCE} (same seeds, paired):", ""]
        for regime, row in paired:
            lines.append(
                f"- {regime}: token F1 at {row['token_f1_share_of_real_only']:.1%} of "
                f"{REFERENCE}; token F1 difference {_cell(row['token_f1_minus_real_only'])}; "
                f"document leakage difference {_cell(row['leakage_rate_minus_real_only'])}"
            )
    labels = sorted({lab for row in regimes.values() for lab in row["per_label_recall"]})
    if labels:
        lines += ["", "Per-label overlap recall (mean over repeats):", ""]
        lines += ["| label | " + " | ".join(regimes) + " |", "|---" * (1 + len(regimes)) + "|"]
        for label in labels:
            cells = [
                f"{row['per_label_recall'][label]:.3f}" if label in row["per_label_recall"] else "-"
                for row in regimes.values()
            ]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    privacy = table.get("privacy")
    if privacy:
        lines += ["", "The run's privacy audit (the audited corpus):", ""]
        lines += [f"- {name}: {value:g}" for name, value in sorted(privacy.items())]
    return "\n".join(lines) + "\n"


def write_report(
    run: SiteRun, results: Sequence[Repeat], out: Path, title: str, planned: int | None = None
) -> tuple[Path, Path]:
    """``repeats.json`` and ``repeats.md`` in ``out``, written atomically. With ``planned``
    above the repeats in ``results``, the report says it covers only the finished ones."""
    audit = read_record_file(AuditReport, run.audit)
    table = summary(results, audit)
    table["finished"] = {"repeats": len(results), "planned": planned or len(results)}
    table["inputs"] = {k: str(v) for k, v in vars(run).items()}
    json_path, md_path = out / "repeats.json", out / "repeats.md"
    atomic_write_text(json_path, json.dumps(table, indent=2) + "\n")
    atomic_write_text(md_path, markdown(table, title))
    return json_path, md_path


def train_with_encoder(base_model: str, progress: Progress | None) -> Trainer:
    """The site pipeline's trainer (``train_encoder``): registry names, per-epoch resume."""
    from site_agent.annotator.encoder import train_encoder

    def train(
        corpus: Corpus, validation: Corpus, settings: AnnotatorSettings, out_dir: Path
    ) -> Path:
        trained = train_encoder(corpus, validation, base_model, settings, out_dir, progress)
        return trained.model_dir

    return train
