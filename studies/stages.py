"""The stages of one experiment run: the site pipeline up to the audit, re-wired, then training
under the run's regime and scoring on the held-out test split.

split -> pseudonymise -> subsets -> annotator -> adapt -> generate -> annotate -> audit ->
evaluate-gold -> train-evaluate

The registered stages run unchanged where they can; ``subsets`` hands the annotator and the
generator their shares of the training split; the adapt stage makes no adapter when its share
is 0 (the generator then samples from its base weights, seed 000 Table 2); generation is sized
from the whole training split; the audit records a failed verdict instead of stopping (an
experiment exports nothing; its privacy figures are results). Each stage's settings include the
run's knobs it depends on, so the content-addressed store shares whatever two runs have in
common.
"""

from __future__ import annotations

import dataclasses
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol import Corpus
from protocol.audit import AUDIT_JSON
from protocol.evaluation import EvaluationReport
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from shared.safe_models import from_pretrained
from site_agent.adapt.settings import AdaptSettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages import adapt as adapt_stage
from site_agent.stages import annotate as annotate_stage
from site_agent.stages import annotator as annotator_stage
from site_agent.stages import audit as audit_stage
from site_agent.stages import generate as generate_stage
from site_agent.stages import pseudonymise as pseudonymise_stage
from site_agent.stages import split as split_stage
from site_agent.stages.knobs import tokenizer_reference
from site_agent.stages.registry import check_registry
from studies.spec import Condition
from studies.training_sets import Pools, fraction_of, train_and_validation, training_set

FINAL_STAGES = frozenset({"evaluate-gold", "train-evaluate"})


@dataclasses.dataclass(frozen=True)
class RunKnobs:
    """What the experiment adds to the site config for one run."""

    condition: Condition
    seed: int  # the final encoder's seed and the regime's draws
    subset_seed: int  # the draw of the annotator's and the generator's shares
    bootstrap_resamples: int
    max_test_documents: int | None
    fold: tuple[int, int] | None = None  # (this fold, k) under k-fold cross-validation


def rewired(stage: Stage, renames: dict[str, str]) -> Stage:
    """``stage`` reading ``renames[key]`` wherever it read ``key``."""

    def run(ctx: StageContext) -> StageOutput:
        inputs = {old: ctx.inputs[new] for old, new in renames.items()}
        inputs.update({k: v for k, v in ctx.inputs.items() if k not in renames.values()})
        return stage.run(dataclasses.replace(ctx, inputs=inputs))

    inputs = tuple(renames.get(key, key) for key in stage.inputs)
    return dataclasses.replace(stage, run=run, inputs=inputs)


def _subsets_stage(knobs: RunKnobs) -> Stage:
    condition = knobs.condition

    def run(ctx: StageContext) -> StageOutput:
        real = read_corpus(ctx.inputs["split.train"])
        pseudonymised = read_corpus(ctx.inputs["pseudonymise.train"])
        annotator = fraction_of(real, condition.annotator_fraction, knobs.subset_seed)
        adapt_share = fraction_of(real, condition.adapt_fraction, knobs.subset_seed)
        adapt_ids = {d.id for d in adapt_share.documents}
        real_ids = {d.id for d in real.documents}
        # planted canaries are not real documents: they always stay in the adaptation text
        kept = tuple(
            d for d in pseudonymised.documents if d.id in adapt_ids or d.id not in real_ids
        )
        adapt = Corpus(documents=kept, labels=pseudonymised.labels)
        paths = {"annotator_train": ctx.stage_dir / "annotator_train.jsonl"}
        paths["adapt_train"] = ctx.stage_dir / "adapt_train.jsonl"
        write_corpus(annotator, paths["annotator_train"])
        write_corpus(adapt, paths["adapt_train"])
        return StageOutput(
            artifacts=dict(paths),
            summary={"annotator_documents": len(annotator), "adapt_documents": len(adapt_ids)},
        )

    return Stage(
        name="subsets",
        run=run,
        settings=lambda _c: {
            "adapt_fraction": condition.adapt_fraction,
            "annotator_fraction": condition.annotator_fraction,
            "seed": knobs.subset_seed,
        },
        inputs=("split.train", "pseudonymise.train"),
        description="the annotator's and the generator's shares of the training split",
    )


def untrained_adapter(base_model: str, settings: AdaptSettings, out_dir: Path) -> Path:
    """A LoRA adapter as initialised (B = 0, so B·A = 0): the generator with it samples
    exactly as its base weights do. This is "no domain adaptation" (seed 000 Table 2, 0%)
    without a second code path in generation."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from site_agent.adapt.model import lora_config
    from site_agent.models import resolve_model

    model = from_pretrained(AutoModelForCausalLM, resolve_model(base_model, allow_fetch=True))
    out = out_dir / "adapter"
    get_peft_model(model, lora_config(model, settings)).save_pretrained(str(out))
    return out


def _adapt_stage(knobs: RunKnobs) -> Stage:
    base = rewired(adapt_stage.STAGE, {"pseudonymise.train": "subsets.adapt_train"})
    if knobs.condition.adapt_fraction > 0:
        return base

    def run(ctx: StageContext) -> StageOutput:
        adapter = untrained_adapter(ctx.config.adapt.base_model, ctx.config.adapt, ctx.stage_dir)
        return StageOutput(artifacts={"adapter": adapter}, summary={"adapted": False})

    return dataclasses.replace(
        base,
        run=run,
        inputs=(),
        settings=lambda c: {**adapt_stage.STAGE.settings(c), "adapted": False},
        description="no domain adaptation: an untrained (identity) LoRA adapter",
    )


def _audit(ctx: StageContext) -> StageOutput:
    config = ctx.config
    report, corpus = audit_stage.audit_synthetic_notes(
        dict(ctx.inputs),
        config.audit,
        tokenizer_reference(config),
        ctx.stage_dir,
    )
    return StageOutput(
        artifacts={"report": ctx.stage_dir / AUDIT_JSON, "corpus": corpus},
        summary={"passed": report.passed, "kept": report.n_kept_documents},
    )


AUDIT = dataclasses.replace(
    audit_stage.STAGE,
    run=_audit,
    settings=lambda c: {"audit": c.audit, "tokenizer": c.adapt.base_model},
    description="privacy audit (recorded; an experiment exports nothing)",
)


def evaluate_model(
    model_dir: Path, test: Corpus, knobs: RunKnobs, progress: Progress | None
) -> EvaluationReport:
    """Every metric of the annotator in ``model_dir`` on ``test``, with document-bootstrap
    intervals (seeded by the run)."""
    from shared.metrics import BootstrapSettings, evaluate
    from site_agent.annotator.encoder import annotate_corpus
    from site_agent.train_synthetic.sets import without_spans

    n = knobs.bootstrap_resamples
    bootstrap = BootstrapSettings(n_resamples=n, seed=knobs.seed) if n else None
    predicted = annotate_corpus(model_dir, without_spans(test), progress)
    return evaluate(test, predicted, bootstrap=bootstrap)


def test_split(path: Path, knobs: RunKnobs) -> Corpus:
    """The held-out test split, its first ``max_test_documents`` when capped."""
    test = read_corpus(path)
    if knobs.max_test_documents is None:
        return test
    docs = test.documents[: knobs.max_test_documents]
    return Corpus(documents=docs, labels=test.labels)


def _evaluation_settings(knobs: RunKnobs) -> dict[str, Any]:
    return {"bootstrap": knobs.bootstrap_resamples, "max_test": knobs.max_test_documents}


def _gold_stage(knobs: RunKnobs) -> Stage:
    def run(ctx: StageContext) -> StageOutput:
        test = test_split(ctx.inputs["split.test"], knobs)
        report = evaluate_model(ctx.inputs["annotator.model"], test, knobs, ctx.progress)
        out = ctx.stage_dir / "evaluation.json"
        atomic_write_text(out, report.model_dump_json(indent=2))
        return StageOutput(artifacts={"evaluation": out})

    return Stage(
        name="evaluate-gold",
        run=run,
        settings=lambda c: {**_evaluation_settings(knobs), "device": c.device},
        inputs=("annotator.model", "split.test"),
        description="score the machine annotator (trained on real notes) on the test split",
    )


def _train_stage(knobs: RunKnobs) -> Stage:
    from site_agent.annotator.encoder import train_encoder

    condition = knobs.condition
    unfiltered = condition.synthetic_source == "unfiltered"
    source = "annotate.corpus" if unfiltered else "audit.corpus"  # before or after the gate

    def run(ctx: StageContext) -> StageOutput:
        settings = ctx.config.annotator.training.model_copy(update={"seed": knobs.seed})
        synthetic = read_corpus(ctx.inputs[source])
        pools = Pools(
            real=read_corpus(ctx.inputs["subsets.annotator_train"]),
            synthetic=synthetic,
            n_train_split=len(read_corpus(ctx.inputs["split.train"])),
            seed=knobs.seed,
            chunk_words=settings.chunk_words,
            batch_size=settings.batch_size,
            epochs=settings.epochs,
        )
        built = training_set(pools, condition)
        real_validation = read_corpus(ctx.inputs["split.validation"])
        train, validation = train_and_validation(built, real_validation, settings.seed)
        # the weights are not kept: the evaluation is the result (an e5-small copy is ~0.5 GB)
        with tempfile.TemporaryDirectory(dir=ctx.stage_dir) as scratch:
            trained = train_encoder(
                train, validation, ctx.config.annotator.base_model, settings,
                Path(scratch) / "model", ctx.progress,
            )  # fmt: skip
            test = test_split(ctx.inputs["split.test"], knobs)
            report = evaluate_model(trained.model_dir, test, knobs, ctx.progress)
        out = ctx.stage_dir / "evaluation.json"
        atomic_write_text(out, report.model_dump_json(indent=2))
        sizes = {"n_train": len(built.corpus), "n_real": built.n_real}
        sizes["n_synthetic"] = built.n_synthetic
        sizes["synthetic_pool"] = len(synthetic)
        sizes["synthetic_unfiltered"] = int(unfiltered)
        atomic_write_text(ctx.stage_dir / "training_set.json", json.dumps(sizes, indent=2))
        return StageOutput(
            artifacts={"evaluation": out, "training_set": ctx.stage_dir / "training_set.json"},
            summary=sizes,
        )

    regime = condition.model_dump(
        include={
            "regime",
            "synthetic_amount",
            "synthetic_fraction",
            "real_fraction",
            "fixed_n",
            "steps",
            "synthetic_source",
        }
    )
    return Stage(
        name="train-evaluate",
        run=run,
        settings=lambda c: {
            **regime,
            "annotator": c.annotator,
            "seed": knobs.seed,
            "device": c.device,
            **_evaluation_settings(knobs),
        },
        inputs=(
            "subsets.annotator_train",
            source,
            "split.train",
            "split.validation",
            "split.test",
        ),
        description="train an encoder under the run's regime and score it on the test split",
    )


def fold_of(train: Corpus, test: Corpus, fold: int, k: int, seed: int) -> tuple[Corpus, Corpus]:
    """Fold ``fold`` of ``k`` over the training and test notes together: a seeded
    permutation cut into k near-equal parts; the part is the test split, the rest trains."""
    pool = [*train.documents, *test.documents]
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    held = {order[i] for i in range(fold, len(order), k)}
    labels = tuple(sorted(set(train.labels) | set(test.labels)))
    kept = tuple(d for i, d in enumerate(pool) if i not in held)
    out = tuple(d for i, d in enumerate(pool) if i in held)
    return Corpus(documents=kept, labels=labels), Corpus(documents=out, labels=labels)


def _folds_stage(fold: int, k: int) -> Stage:
    def run(ctx: StageContext) -> StageOutput:
        train, test = fold_of(
            read_corpus(ctx.inputs["split.train"]),
            read_corpus(ctx.inputs["split.test"]),
            fold,
            k,
            ctx.config.split.seed,
        )
        paths = {"train": ctx.stage_dir / "train.jsonl", "test": ctx.stage_dir / "test.jsonl"}
        write_corpus(train, paths["train"])
        write_corpus(test, paths["test"])
        return StageOutput(artifacts=dict(paths), summary={"train": len(train), "test": len(test)})

    return Stage(
        name="folds",
        run=run,
        settings=lambda c: {"fold": fold, "k": k, "seed": c.split.seed},
        inputs=("split.train", "split.test"),
        description=f"fold {fold + 1} of {k}: its test notes, the rest to train",
    )


FOLD_INPUTS = {"split.train": "folds.train", "split.test": "folds.test"}


def experiment_stages(knobs: RunKnobs) -> tuple[Stage, ...]:
    """The stages of one run, in order (checked like the site pipeline's registry); under
    k-fold cross-validation every stage reads the fold's splits instead of the site's."""
    stages: tuple[Stage, ...] = (
        pseudonymise_stage.STAGE,
        _subsets_stage(knobs),
        rewired(annotator_stage.STAGE, {"split.train": "subsets.annotator_train"}),
        _adapt_stage(knobs),
        generate_stage.STAGE,
        annotate_stage.STAGE,
        AUDIT,
        _gold_stage(knobs),
        _train_stage(knobs),
    )
    final = FINAL_STAGES
    if knobs.fold is not None:
        renamed = []
        for stage in stages:
            renames = {old: new for old, new in FOLD_INPUTS.items() if old in stage.inputs}
            renamed.append(rewired(stage, renames) if renames else stage)
        stages = (_folds_stage(*knobs.fold), *renamed)
        final = final | {"folds"}  # it re-partitions train and test; only it reads the site's
    stages = (split_stage.STAGE, *stages)
    check_registry(stages, final=final)
    return stages


def uses_site_config(config: SiteConfig) -> SiteConfig:
    """The site config as the experiment's stages read it (no signing key: nothing is sealed
    or exported)."""
    return config.model_copy(update={"signing_key": None})
