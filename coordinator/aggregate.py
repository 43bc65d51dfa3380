"""Aggregate phase: NER models trained at the coordinator on verified synthetic corpora.

One model per site (its own synthetic corpus) and one pooled model (the union). Labels are
harmonised through the label mapping first, so every model tags in one shared label space and
can be scored at every site. This module is also the single place that chooses the NER and
metrics implementations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from coordinator.transport import record_to_safetensors_bytes
from coordinator.verify import VerifiedBundle
from protocol import Corpus, Document, LabelMapping
from protocol.annotator import AnnotatorSettings
from protocol.rounds import Estimate, ModelMetrics, TrainedModel
from shared.atomic import atomic_directory
from shared.bundle_verify import ENCODER_PREFIX
from shared.contained import contained_path, write_contained
from shared.provenance import make_provenance


class NerSettings(AnnotatorSettings):
    """The annotator's settings with defaults for coordinator-side training (one CPU thread)."""

    num_threads: int | None = 1


def train_annotator(
    train: Corpus, validation: Corpus | None, base_model: Path, settings: NerSettings, out_dir: Path
) -> Path:
    """The annotator engineer's trainer (site_agent.annotate); returns the model folder."""
    from site_agent.annotate import train_annotator as train_encoder

    return Path(train_encoder(train, validation, base_model, settings, out_dir).model_dir)


def machine_annotate(model_dir: Path, corpus: Corpus) -> Corpus:
    from site_agent.annotate import machine_annotate as annotate

    return annotate(model_dir, corpus)


def _estimate(value: float, interval: object) -> Estimate:
    low = getattr(interval, "low", value)
    high = getattr(interval, "high", value)
    clean = [v if math.isfinite(v) else value for v in (low, high)]
    return Estimate(value=value, low=clean[0], high=clean[1])


def evaluate_predictions(
    gold: Corpus, pred: Corpus, mapping: LabelMapping | None, n_bootstrap: int, seed: int
) -> ModelMetrics:
    """The foundation metrics (shared.metrics) reduced to what a site may send back."""
    from shared.metrics import BootstrapSettings, evaluate

    bootstrap = BootstrapSettings(n_resamples=n_bootstrap, seed=seed) if n_bootstrap else None
    report = evaluate(gold, pred, mapping, bootstrap)
    ci = report.confidence_intervals
    return ModelMetrics(
        token_f1=_estimate(report.token.micro.f1, ci.get("token.micro.f1")),
        span_overlap_f1=_estimate(report.overlap.micro.f1, ci.get("overlap.micro.f1")),
        document_leakage=_estimate(report.leakage.leakage_rate, ci.get("leakage.rate")),
        label_recall={label: s.recall for label, s in sorted(report.overlap.per_label.items())},
        n_documents=report.n_documents,
    )


def init_token_classifier(
    base_model: Path, labels: tuple[str, ...], out_dir: Path, seed: int
) -> Path:
    """The FedAvg starting point: ``base_model`` with a seeded head over ``labels`` (IOB2)."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from shared.ner_tokens import iob2_labels

    torch.manual_seed(seed)
    tags = iob2_labels(labels)
    model = AutoModelForTokenClassification.from_pretrained(
        base_model,
        num_labels=len(tags),
        id2label=dict(enumerate(tags)),
        label2id={t: i for i, t in enumerate(tags)},
    )
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        AutoTokenizer.from_pretrained(base_model).save_pretrained(tmp)
    return out_dir


@dataclass(frozen=True)
class BuiltModel:
    """A trained model folder and what the report says about it."""

    info: TrainedModel
    model_dir: Path


def shared_labels(mapping: LabelMapping | None, corpora: Iterable[Corpus]) -> tuple[str, ...]:
    """The label space every coordinator model tags in."""
    if mapping is not None:
        return tuple(sorted(mapping.coarse_labels))
    return tuple(sorted({label for corpus in corpora for label in corpus.labels}))


def harmonise(corpus: Corpus, mapping: LabelMapping | None, labels: tuple[str, ...]) -> Corpus:
    """``corpus`` with every span label mapped (raises on an unmapped label).

    The label set is ``labels`` plus any label still present, so a model trained on it has a
    head over exactly ``labels`` whenever the mapping covers the corpus.
    """
    documents = [
        Document.model_validate(
            {
                **doc.model_dump(),
                "spans": [
                    {**s.model_dump(), "label": mapping.map_label(s.label) if mapping else s.label}
                    for s in doc.spans
                ],
            }
        )
        for doc in corpus.documents
    ]
    present = {span.label for doc in documents for span in doc.spans}
    return Corpus(
        documents=tuple(documents),
        labels=tuple(sorted(set(labels) | present)),
        provenance=corpus.provenance,
    )


def pool(corpora: dict[str, Corpus], labels: tuple[str, ...]) -> Corpus:
    """The union of harmonised corpora; document ids are prefixed with the site id."""
    documents = [
        doc.model_copy(update={"id": f"{site}/{doc.id}"})
        for site, corpus in sorted(corpora.items())
        for doc in corpus.documents
    ]
    return Corpus(
        documents=tuple(documents),
        labels=labels,
        provenance=make_provenance(parents=tuple(sorted(corpora))),
    )


def exported_encoders(bundles: dict[str, VerifiedBundle], out_root: Path) -> list[BuiltModel]:
    """Each site's exported synthetic-trained encoder (``encoder/`` files), as a model folder.

    These tag in the site's own labels; cross-site evaluation maps their predictions.
    """
    built = []
    for site, bundle in sorted(bundles.items()):
        weights = {n: w for n, w in bundle.weights.items() if n.startswith(ENCODER_PREFIX)}
        if not weights or not any(n.endswith("/config.json") for n in bundle.files):
            continue
        model_dir = contained_path(out_root, f"export-{site}")
        for name, data in bundle.files.items():
            if name.startswith(ENCODER_PREFIX):
                write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
        for name, (record, header) in weights.items():
            data = record_to_safetensors_bytes(record, header)
            write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
        info = TrainedModel(
            name=f"export:{site}",
            kind="export",
            trained_on=(site,),
            n_training_documents=bundle.accepted.n_documents,
        )
        built.append(BuiltModel(info, model_dir))
    return built


def train_site_and_pooled(
    corpora: dict[str, Corpus],
    base_model: Path,
    settings: NerSettings,
    out_root: Path,
) -> list[BuiltModel]:
    """One model per site corpus plus one on their union (all corpora already harmonised)."""
    built = []
    for site, corpus in sorted(corpora.items()):
        model_dir = train_annotator(
            corpus, None, base_model, settings, contained_path(out_root, f"site-{site}")
        )
        info = TrainedModel(
            name=f"site:{site}", kind="site", trained_on=(site,), n_training_documents=len(corpus)
        )
        built.append(BuiltModel(info, model_dir))
    if len(corpora) > 1:
        labels = next(iter(corpora.values())).labels
        union = pool(corpora, labels)
        model_dir = train_annotator(union, None, base_model, settings, out_root / "pooled")
        info = TrainedModel(
            name="pooled",
            kind="pooled",
            trained_on=tuple(sorted(corpora)),
            n_training_documents=len(union),
        )
        built.append(BuiltModel(info, model_dir))
    return built
