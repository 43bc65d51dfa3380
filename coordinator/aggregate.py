"""Aggregate phase: NER models trained at the coordinator on verified synthetic corpora.

One model per site (its own synthetic corpus) and one pooled model (the union). Labels are
harmonised through the label mapping first, so every model tags in one shared label space and
can be scored at every site. This module is also the single place that chooses the NER and
metrics implementations.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from coordinator.fallback import metrics as _metrics
from coordinator.fallback import ner as _ner
from protocol import Corpus, Document, LabelMapping
from protocol.rounds import TrainedModel
from shared.provenance import make_provenance

# Swap points: replace with site_agent.annotate / shared.metrics once they are merged.
NerSettings = _ner.NerSettings
train_annotator = _ner.train_annotator
machine_annotate = _ner.machine_annotate
evaluate_predictions = _metrics.evaluate
init_token_classifier = _ner.init_token_classifier


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


def train_site_and_pooled(
    corpora: dict[str, Corpus],
    base_model: Path,
    settings: _ner.NerSettings,
    out_root: Path,
) -> list[BuiltModel]:
    """One model per site corpus plus one on their union (all corpora already harmonised)."""
    built = []
    for site, corpus in sorted(corpora.items()):
        model_dir = train_annotator(corpus, None, base_model, settings, out_root / f"site-{site}")
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
