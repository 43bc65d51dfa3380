"""How the coordinator trains an NER model: the :mod:`ner` engine the sites use too.

The coordinator trains its per-site and pooled models with exactly the trainer the sites use
for their gold annotator (``ner.train``), so the models are comparable.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from protocol import Corpus
from protocol.annotator import AnnotatorSettings
from shared.atomic import atomic_directory, atomic_write_text
from shared.model_identity import loadable_identity
from shared.provenance import config_digest

log = logging.getLogger("flwr")

NerSettings = AnnotatorSettings
"""Coordinator-side training takes the sites' annotator settings as they are: its threads are
the cores other processes leave idle, re-read every epoch (``shared.threads``). It was pinned to
one thread, which left a core idle while the demo's coordinator trained its four models and the
SuperNodes waited (43 s of the demo's phase 3 on 2 cores)."""


def train_annotator(
    train: Corpus, validation: Corpus | None, base_model: Path, settings: NerSettings, out_dir: Path
) -> Path:
    """The sites' annotator trainer; returns the model folder.

    A long federation outlives a stopped coordinator: a model already in ``out_dir`` for the
    same notes, base model and settings (``<out_dir>.trained-for.json``) is used as it is, and
    a training stopped part-way resumes from its last finished epoch
    (``<out_dir>.checkpoint``, removed once the model is saved)."""
    from ner.train import train_annotator as train_encoder

    key = training_key(train, validation, base_model, settings)
    marker = out_dir.with_name(f"{out_dir.name}.trained-for.json")
    if out_dir.is_dir() and _read_key(marker) == key:
        log.info("  %s: trained before on the same notes and settings, reused", out_dir.name)
        return out_dir
    marker.unlink(missing_ok=True)  # the folder is replaced: its key no longer holds
    checkpoint = out_dir.with_name(f"{out_dir.name}.checkpoint")
    result = train_encoder(train, validation, base_model, settings, out_dir, None, checkpoint)
    atomic_write_text(marker, json.dumps({"key": key}))
    return Path(result.model_dir)


def training_key(
    train: Corpus, validation: Corpus | None, base_model: Path, settings: NerSettings
) -> str:
    """What a trained model depends on: the notes and labels (not their provenance), the base
    model's content and the settings."""

    def notes(corpus: Corpus | None) -> object:
        if corpus is None:
            return None
        return [corpus.labels, [d.model_dump(mode="json") for d in corpus.documents]]

    identity = loadable_identity(base_model)
    return config_digest(
        [
            notes(train),
            notes(validation),
            identity.name,
            identity.sha256,
            settings.model_dump(mode="json"),
        ]
    )


def _read_key(marker: Path) -> str | None:
    try:
        value = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value.get("key") if isinstance(value, dict) else None


def init_token_classifier(
    base_model: Path, labels: tuple[str, ...], out_dir: Path, seed: int
) -> Path:
    """The FedAvg starting point: ``base_model`` with a seeded head over ``labels`` (IOB2)."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from shared.ner_tokens import iob2_labels
    from shared.safe_models import from_pretrained

    torch.manual_seed(seed)
    tags = iob2_labels(labels)
    model = from_pretrained(
        AutoModelForTokenClassification,
        base_model,
        num_labels=len(tags),
        id2label=dict(enumerate(tags)),
        label2id={t: i for i, t in enumerate(tags)},
    )
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        from_pretrained(AutoTokenizer, base_model).save_pretrained(tmp)
    return out_dir
