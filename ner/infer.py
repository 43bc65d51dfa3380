"""Machine annotation: label a corpus (e.g. synthetic notes) with a trained annotator.

Documents are cut into the same 128-word chunks as in training, batched by length, and the
predicted tags are decoded back to exact, non-overlapping character spans on word boundaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError

from ner.backbone import load_fast_tokenizer
from ner.features import encode_corpus, predicted_documents
from ner.loop import Progress, predict, resolve_bf16
from ner.train import RECORD_FILE, thread_budget, use_threads
from protocol import Corpus
from protocol.annotator import AnnotatorRecord, AnnotatorSettings
from shared.errors import ConfigError, ModelUnavailableError
from shared.provenance import config_digest, make_provenance, sha256_file


def load_record(model_dir: Path) -> AnnotatorRecord | None:
    """The ``annotator.json`` of a model folder, or None for a foreign token classifier."""
    path = Path(model_dir) / RECORD_FILE
    if not path.exists():
        return None
    try:
        return AnnotatorRecord.model_validate_json(path.read_text("utf-8"))
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: not a valid annotator record ({exc.error_count()} problems, first: "
            f"{exc.errors()[0]['msg']}); fix: retrain the annotator, or delete the file to use "
            "the folder as a plain token classifier"
        ) from exc


def _load_model(model_dir: Path) -> Any:
    from transformers import AutoModelForTokenClassification

    from shared.safe_models import from_pretrained

    return from_pretrained(AutoModelForTokenClassification, model_dir)


def _entity_labels(id2label: dict[int, str]) -> tuple[str, ...]:
    """Entity labels of a tag set (``B-X``/``I-X`` give X; prefix-less tags are their own)."""
    return tuple(sorted({t[2:] if t[:2] in ("B-", "I-") else t for t in id2label.values()} - {"O"}))


def machine_annotate(
    model_dir: Path,
    corpus: Corpus,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> Corpus:
    """A copy of ``corpus`` whose spans are the annotator's predictions (input spans dropped)."""
    if not (Path(model_dir) / "config.json").is_file():
        raise ModelUnavailableError(
            f"{model_dir}: no trained annotator here (config.json missing); fix: train one with "
            "train_annotator or point to the folder it wrote"
        )
    record = load_record(model_dir)
    settings = record.settings if record else AnnotatorSettings()
    budget = thread_budget(settings)  # its reading covers loading the model and encoding
    tokenizer = load_fast_tokenizer(model_dir, align=False)
    model = _load_model(model_dir)
    if torch.cuda.is_available():
        model = model.to("cuda")
    id2label = {int(k): v for k, v in model.config.id2label.items()}
    chunks = encode_corpus(corpus, tokenizer, settings.chunk_words, settings.max_length)
    wordy = [c for c in chunks if c.has_words]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    bf16 = resolve_bf16(settings.bf16, next(model.parameters()).device)
    use_threads(budget)
    predicted = predict(
        model, wordy, batch_size=batch_size, pad_id=pad, bf16=bf16,
        decoder=settings.decoding, tags=[id2label[i] for i in range(len(id2label))],
        stage="machine annotation", progress=progress,
    )  # fmt: skip
    return Corpus(
        documents=predicted_documents(corpus, wordy, predicted, id2label),
        labels=_entity_labels(id2label),
        provenance=_provenance(model_dir, record, corpus, bf16),
    )


def _provenance(model_dir: Path, record: AnnotatorRecord | None, corpus: Corpus, bf16: bool) -> Any:
    weights = next(iter(sorted(Path(model_dir).glob("*.safetensors"))), None)
    notes = {
        "stage": "machine_annotate",
        "annotator": str(model_dir),
        "annotator_base_model": record.base_model if record else "unknown",
        "bf16": "yes" if bf16 else "no",  # autocast: the precision the predictions came from
    }
    if weights is not None:
        notes["annotator_weights_sha256"] = sha256_file(weights)
    return make_provenance(
        source=str(model_dir),
        config_digest=record.settings_digest if record else None,
        parents=(corpus.provenance.source_sha256 or config_digest(corpus),),
        notes=notes,
    )
