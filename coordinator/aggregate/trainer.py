"""How the coordinator trains an NER model: the :mod:`ner` engine the sites use too.

The coordinator trains its per-site and pooled models with exactly the trainer the sites use
for their gold annotator (``ner.train``), so the models are comparable.
"""

from __future__ import annotations

from pathlib import Path

from protocol import Corpus
from protocol.annotator import AnnotatorSettings
from shared.atomic import atomic_directory

NerSettings = AnnotatorSettings
"""Coordinator-side training takes the sites' annotator settings as they are: its threads are
the cores other processes leave idle, re-read every epoch (``shared.threads``). It was pinned to
one thread, which left a core idle while the demo's coordinator trained its four models and the
SuperNodes waited (43 s of the demo's phase 3 on 2 cores)."""


def train_annotator(
    train: Corpus, validation: Corpus | None, base_model: Path, settings: NerSettings, out_dir: Path
) -> Path:
    """The sites' annotator trainer; returns the model folder."""
    from ner.train import train_annotator as train_encoder

    return Path(train_encoder(train, validation, base_model, settings, out_dir).model_dir)


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
