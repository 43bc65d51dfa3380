"""What a site does for each coordinator message. Plain functions over records; no Flower app.

Nothing here returns text from the site's notes: roll call sends counts and labels, collect
sends the already-audited export bundle, training sends weights, evaluation sends metrics.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from flwr.app import ConfigRecord, MetricRecord, RecordDict

from coordinator import aggregate, wire
from coordinator.transport import pack_model_dir, unpack_model_dir
from protocol import Corpus, LabelMapping
from protocol.corpus import UnmappedLabelError
from protocol.rounds import RollCallReply, TestSplitSize
from shared.corpus_io import read_corpus
from site_agent.federation.bundle import (
    latest_bundle,
    pack_bundle,
    read_manifest,
    verified_bundle,
)
from site_agent.federation.layout import SiteFailure, SiteLayout


def load_test_split(layout: SiteLayout) -> Corpus:
    if not layout.test_split.exists():
        raise SiteFailure("test_split_missing")
    try:
        return read_corpus(layout.test_split)
    except Exception as exc:
        raise SiteFailure("test_split_invalid") from exc


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
        has_baseline=(layout.annotator_dir / "config.json").exists(),
    )
    return RecordDict({wire.PAYLOAD: wire.model_record(reply)})


def collect(layout: SiteLayout) -> RecordDict:
    return pack_bundle(latest_bundle(layout.export_dir), layout.signing_public_key)


def _mapping(config: ConfigRecord) -> LabelMapping | None:
    raw = config.get("mapping", "")
    return LabelMapping.model_validate_json(str(raw)) if raw else None


def _own_synthetic_corpus(layout: SiteLayout) -> Corpus:
    _, contents = verified_bundle(latest_bundle(layout.export_dir), layout.signing_public_key)
    return contents.corpus


def fedavg_train(layout: SiteLayout, content: RecordDict) -> RecordDict:
    """Train the received global model on this site's synthetic corpus for E local epochs."""
    config = content.config_records["config"]
    labels = tuple(str(x) for x in config["labels"])  # type: ignore[union-attr]
    try:
        corpus = aggregate.harmonise(_own_synthetic_corpus(layout), _mapping(config), labels)
    except UnmappedLabelError as exc:
        raise SiteFailure("label_unmapped") from exc
    settings = aggregate.NerSettings(
        epochs=int(config["local-epochs"]),  # type: ignore[arg-type]
        learning_rate=float(config["learning-rate"]),  # type: ignore[arg-type]
        batch_size=int(config["batch-size"]),  # type: ignore[arg-type]
        seed=int(config["seed"]),  # type: ignore[arg-type]
    )
    with tempfile.TemporaryDirectory() as tmp:
        try:
            start = unpack_model_dir(
                content.array_records["model"], content.config_records["files"], Path(tmp) / "in"
            )
        except (KeyError, ValueError) as exc:
            raise SiteFailure("model_unpack_failed") from exc
        try:
            trained = aggregate.train_annotator(corpus, None, start, settings, Path(tmp) / "out")
        except Exception as exc:
            raise SiteFailure("training_failed") from exc
        weights, _ = pack_model_dir(trained)
    return RecordDict(
        {
            "model": weights,
            "metrics": MetricRecord({wire.NUM_EXAMPLES: len(corpus)}),
        }
    )


def _score(
    predicted: Corpus, gold: Corpus, mapping: LabelMapping | None, config: ConfigRecord
) -> MetricRecord:
    labels = tuple(str(x) for x in config["labels"])  # type: ignore[union-attr]
    try:
        gold_shared = aggregate.harmonise(gold, mapping, labels)
        pred_shared = aggregate.harmonise(predicted, mapping, labels)
    except UnmappedLabelError as exc:
        raise SiteFailure("label_unmapped") from exc
    metrics = aggregate.evaluate_predictions(
        gold_shared,
        pred_shared,
        None,
        n_bootstrap=int(config["bootstrap"]),  # type: ignore[arg-type]
        seed=int(config["seed"]),  # type: ignore[arg-type]
    )
    return MetricRecord(metrics.to_flat())  # type: ignore[arg-type]


def _evaluate_one(name: str, content: RecordDict, gold: Corpus, config: ConfigRecord) -> RecordDict:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            model_dir = unpack_model_dir(
                content.array_records[wire.MODEL_PREFIX + name],
                content.config_records[wire.MODEL_FILES_PREFIX + name],
                Path(tmp),
            )
        except (KeyError, ValueError) as exc:
            raise SiteFailure("model_unpack_failed") from exc
        predicted = aggregate.machine_annotate(model_dir, gold)
    # Coordinator models tag in the shared label space; exported site encoders are mapped.
    mapped = {str(x) for x in config["mapped-models"]}  # type: ignore[union-attr]
    mapping = _mapping(config) if name in mapped else None
    return RecordDict({wire.METRICS_PREFIX + name: _score(predicted, gold, mapping, config)})


def _evaluate_baseline(layout: SiteLayout, gold: Corpus, config: ConfigRecord) -> MetricRecord:
    if not (layout.annotator_dir / "config.json").exists():
        raise SiteFailure("annotator_missing")
    predicted = aggregate.machine_annotate(layout.annotator_dir, gold)
    return _score(predicted, gold, _mapping(config), config)


def cross_site(layout: SiteLayout, content: RecordDict) -> RecordDict:
    """Score every received model, and the site's own annotator, on the held-out test split."""
    config = content.config_records["config"]
    gold = load_test_split(layout)
    mapping = _mapping(config)
    reply = RecordDict()
    names = [str(x) for x in config["models"]]  # type: ignore[union-attr]
    for name in names:
        try:
            reply.update(_evaluate_one(name, content, _map_gold(gold, mapping), config))
        except SiteFailure as failure:
            reply[wire.ERROR + ":" + name] = ConfigRecord({"code": failure.code})
        except Exception:
            reply[wire.ERROR + ":" + name] = ConfigRecord({"code": "evaluation_failed"})
    try:
        reply[wire.METRICS_PREFIX + wire.BASELINE] = _evaluate_baseline(layout, gold, config)
    except SiteFailure as failure:
        reply[wire.ERROR + ":" + wire.BASELINE] = ConfigRecord({"code": failure.code})
    except Exception:
        reply[wire.ERROR + ":" + wire.BASELINE] = ConfigRecord({"code": "evaluation_failed"})
    return reply


def _map_gold(gold: Corpus, mapping: LabelMapping | None) -> Corpus:
    """Gold in the shared label space (coordinator models are scored against this)."""
    if mapping is None:
        return gold
    try:
        return aggregate.harmonise(gold, mapping, tuple(sorted(mapping.coarse_labels)))
    except UnmappedLabelError as exc:
        raise SiteFailure("label_unmapped") from exc
