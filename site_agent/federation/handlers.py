"""What a site does for each coordinator message. Plain functions over records; no Flower app.

Nothing here returns text from the site's notes: roll call sends counts and labels, collect
sends the already-audited export bundle, training sends weights, evaluation sends metrics.
Instructions arrive as protocol models (``protocol.rounds``) through ``shared.wire``; every
number in them is checked against the site's ``[federation.limits]`` (``bounds.py``) and
scoring follows its ``[federation.evaluation]`` policy (``evaluation.py``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from flwr.app import RecordDict

from protocol import Corpus, LabelMapping
from protocol.annotator import AnnotatorSettings
from protocol.corpus import UnmappedLabelError
from protocol.rounds import (
    BASELINE,
    CollectInstruction,
    CrossSiteInstruction,
    CrossSiteReply,
    FedAvgInstruction,
    FedAvgUpdate,
    ModelMetrics,
    PrivacySpend,
    RollCallReply,
    SiteErrorCode,
    TestSplitSize,
)
from shared import wire
from shared.corpus_io import read_corpus
from shared.label_mapping import harmonise
from shared.metrics.model_metrics import evaluate_predictions
from shared.transport import pack_model_dir, unchanged_arrays, without
from site_agent.federation.accountant import Ledger, spend_of, split_key
from site_agent.federation.bounds import check_cross_site, check_fedavg
from site_agent.federation.bundle import (
    latest_bundle,
    pack_bundle,
    read_manifest,
    verified_bundle,
)
from site_agent.federation.evaluation import (
    EvaluationLog,
    check_support,
    model_sha256,
    released,
)
from site_agent.federation.layout import SiteFailure, SiteLayout
from site_agent.federation.noisy_figures import noisy_metrics


def annotate(model_dir: Path, corpus: Corpus) -> Corpus:
    """The site's own annotator inference (loads torch on first use)."""
    from ner.infer import machine_annotate

    return machine_annotate(model_dir, corpus)


def load_test_split(layout: SiteLayout) -> Corpus:
    if layout.test_split is None or not layout.test_split.exists():
        raise SiteFailure("test_split_missing")
    try:
        return read_corpus(layout.test_split)
    except Exception as exc:
        raise SiteFailure("test_split_invalid") from exc


def has_annotator(layout: SiteLayout) -> bool:
    return layout.annotator_dir is not None and (layout.annotator_dir / "config.json").exists()


def roll_call(layout: SiteLayout) -> RecordDict:
    test = load_test_split(layout)
    try:
        manifest = read_manifest(latest_bundle(layout.export_dir))
    except SiteFailure:
        manifest = None
    reply = RollCallReply(
        site_id=layout.site_id,
        labels=test.labels,
        manifest=manifest,
        test_split=TestSplitSize(
            n_documents=len(test),
            n_spans=sum(len(d.spans) for d in test.documents),
            n_characters=sum(len(d.text) for d in test.documents),
        ),
        has_baseline=has_annotator(layout),
    )
    return wire.pack(reply)


def collect(layout: SiteLayout, content: RecordDict) -> RecordDict:
    """The verified bundle, with the coordinator's nonce signed into the reply."""
    bundle = latest_bundle(layout.export_dir)
    nonce = read_instruction(content, CollectInstruction).nonce
    return pack_bundle(bundle, layout.signing_public_key, nonce, layout.signing_key)


Instruction = TypeVar("Instruction", CollectInstruction, FedAvgInstruction, CrossSiteInstruction)


def read_instruction(content: RecordDict, cls: type[Instruction]) -> Instruction:
    try:
        return wire.unpack(content, cls)
    except wire.WireError as exc:
        raise SiteFailure("bad_request") from exc


def to_shared_labels(
    corpus: Corpus, mapping: LabelMapping | None, labels: tuple[str, ...]
) -> Corpus:
    try:
        return harmonise(corpus, mapping, labels)
    except UnmappedLabelError as exc:
        raise SiteFailure("label_unmapped") from exc


def _own_synthetic_corpus(layout: SiteLayout) -> Corpus:
    _, contents = verified_bundle(latest_bundle(layout.export_dir), layout.signing_public_key)
    return contents.corpus


def unpack_model(content: RecordDict, name: str, out_dir: Path) -> Path:
    try:
        return wire.unpack_model(content, name, out_dir)
    except wire.WireError as exc:
        raise SiteFailure("model_unpack_failed") from exc


def fedavg_train(layout: SiteLayout, content: RecordDict) -> RecordDict:
    """Train the received global model on this site's synthetic corpus for E local epochs."""
    task = read_instruction(content, FedAvgInstruction)
    check_fedavg(task, content, layout.limits)
    corpus = to_shared_labels(_own_synthetic_corpus(layout), task.mapping, task.labels)
    settings = AnnotatorSettings(
        epochs=task.local_epochs,
        learning_rate=task.learning_rate,
        batch_size=task.batch_size,
        seed=task.seed,
        num_threads=1,
        min_steps=0,  # FedAvg: exactly E local epochs per round
    )
    from ner.train import train_annotator  # loads torch

    with tempfile.TemporaryDirectory() as tmp:
        start = unpack_model(content, wire.GLOBAL_MODEL, Path(tmp) / "in")
        try:
            trained = train_annotator(corpus, None, start, settings, Path(tmp) / "out").model_dir
        except Exception as exc:
            raise SiteFailure("training_failed") from exc
        weights, _ = pack_model_dir(Path(trained))
    received = wire.model_weights(content, wire.GLOBAL_MODEL)
    unchanged = unchanged_arrays(weights, received) if received is not None else ()
    update = FedAvgUpdate(num_examples=len(corpus), unchanged=unchanged)
    sent = without(weights, unchanged)  # the coordinator has them: it sent them
    return wire.pack(update, {wire.MODEL_PREFIX + wire.GLOBAL_MODEL: sent})


def _score(
    predicted: Corpus,
    gold: Corpus,
    mapping: LabelMapping | None,
    task: CrossSiteInstruction,
    intervals: bool,
) -> ModelMetrics:
    gold_shared = to_shared_labels(gold, mapping, task.labels)
    pred_shared = to_shared_labels(predicted, mapping, task.labels)
    n_bootstrap = task.bootstrap if intervals else 0  # no resamples for intervals never sent
    return evaluate_predictions(gold_shared, pred_shared, None, n_bootstrap, seed=task.seed)


class Scoring:
    """One cross-site message scored under the site's evaluation policy, logged per model.

    Under ``mechanism = "gaussian"`` each model first spends its share of the test split's
    lifetime budget in the privacy ledger (refused once spent), then returns noisy
    note-averaged figures; under ``"none"`` exact figures, rounded."""

    def __init__(
        self,
        layout: SiteLayout,
        task: CrossSiteInstruction,
        run_id: int,
        gold: Corpus,
        infer: Callable[[Path, Corpus], Corpus] | None = None,
    ) -> None:
        self.infer = infer  # None: the site's annotator inference (``annotate``)
        self.policy = layout.evaluation
        self.task = task
        self.log = EvaluationLog(layout.site_dir / self.policy.log, run_id, self.policy)
        self.ledger = Ledger(layout.site_dir / self.policy.ledger)
        self.split = split_key(gold)
        self.n_documents = len(gold)

    def privacy(self) -> PrivacySpend | None:
        """The test split's spend now (None without noise), as every reply states it."""
        if self.policy.mechanism != "gaussian":
            return None
        return spend_of(self.ledger, self.split, self.policy, self.n_documents)

    def score(
        self, name: str, model_dir: Path, gold: Corpus, mapping: LabelMapping | None
    ) -> ModelMetrics:
        """The released figures of the model in ``model_dir``, within the run's budget and
        the split's lifetime privacy budget."""
        sha = model_sha256(model_dir)
        if self.log.remaining() == 0:
            self.log.record(name, sha, None, "evaluation_budget_exhausted")
            raise SiteFailure("evaluation_budget_exhausted")
        charged = None
        if self.policy.mechanism == "gaussian":
            try:
                charged = self.ledger.charge(self.split, self.policy, self.n_documents)
            except SiteFailure as failure:
                self.log.record(name, sha, None, failure.code)
                raise
        predicted = (self.infer or annotate)(model_dir, gold)
        if charged is not None:
            gold_shared = to_shared_labels(gold, mapping, self.task.labels)
            pred_shared = to_shared_labels(predicted, mapping, self.task.labels)
            figures = noisy_metrics(gold_shared, pred_shared, self.policy)
        else:
            full = _score(predicted, gold, mapping, self.task, self.policy.intervals)
            shared_gold = to_shared_labels(gold, mapping, self.task.labels)
            figures = released(full, shared_gold, self.policy)
        self.log.record(name, sha, figures, None, charged)
        return figures


def _evaluate_one(name: str, content: RecordDict, gold: Corpus, scoring: Scoring) -> ModelMetrics:
    # Coordinator models tag in the shared label space; exported site encoders are mapped.
    task = scoring.task
    mapping = task.mapping if name in task.mapped_models else None
    with tempfile.TemporaryDirectory() as tmp:
        return scoring.score(name, unpack_model(content, name, Path(tmp)), gold, mapping)


def _evaluate_baseline(layout: SiteLayout, gold: Corpus, scoring: Scoring) -> ModelMetrics:
    if layout.annotator_dir is None or not has_annotator(layout):
        raise SiteFailure("annotator_missing")
    return scoring.score(BASELINE, layout.annotator_dir, gold, scoring.task.mapping)


def cross_site(layout: SiteLayout, content: RecordDict, run_id: int = 0) -> RecordDict:
    """Score every received model, and the site's own annotator, on the held-out test split,
    as far as the site's limits and evaluation policy allow."""
    task = read_instruction(content, CrossSiteInstruction)
    check_cross_site(task, content, layout.limits)
    gold = load_test_split(layout)
    check_support(gold, layout.evaluation)
    scoring = Scoring(layout, task, run_id, gold)
    scoring.log.open_run(len(task.labels), len(gold))
    metrics: dict[str, ModelMetrics] = {}
    errors: dict[str, SiteErrorCode] = {}
    for name in task.models:
        try:
            metrics[name] = _evaluate_one(name, content, _map_gold(gold, task.mapping), scoring)
        except SiteFailure as failure:
            errors[name] = failure.code
        except Exception:
            errors[name] = "evaluation_failed"
    if task.include_baseline:
        try:
            metrics[BASELINE] = _evaluate_baseline(layout, gold, scoring)
        except SiteFailure as failure:
            errors[BASELINE] = failure.code
        except Exception:
            errors[BASELINE] = "evaluation_failed"
    bound = layout.evaluation.bound(len(task.labels), len(gold))  # as the site's log says
    reply = CrossSiteReply(
        metrics=metrics, errors=errors, evaluation_bound=bound, privacy=scoring.privacy()
    )
    return wire.pack(reply)


def _map_gold(gold: Corpus, mapping: LabelMapping | None) -> Corpus:
    """Gold in the shared label space (coordinator models are scored against this)."""
    if mapping is None:
        return gold
    return to_shared_labels(gold, mapping, tuple(sorted(mapping.coarse_labels)))
