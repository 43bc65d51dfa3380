"""A small encoder NER trainer and tagger (IOB2 over fast-tokenizer offsets)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from protocol import Corpus, Document, Span


class NerSettings(BaseModel):
    """Training knobs; defaults suit the tiny test encoders."""

    epochs: int = 3
    learning_rate: float = 1e-3
    batch_size: int = 8
    max_length: int = 128
    seed: int = 13


def bio_labels(labels: tuple[str, ...] | list[str]) -> list[str]:
    return ["O", *[f"{p}-{lab}" for lab in sorted(labels) for p in ("B", "I")]]


def _encode(tokenizer: Any, doc: Document, max_length: int) -> Iterator[tuple[list[int], list]]:
    enc = tokenizer(
        doc.text,
        return_offsets_mapping=True,
        truncation=True,
        max_length=max_length,
        return_overflowing_tokens=True,
        stride=0,
    )
    yield from zip(enc["input_ids"], enc["offset_mapping"], strict=True)


def _tag(offsets: list, spans: tuple[Span, ...], label_ids: dict[str, int]) -> list[int]:
    tags: list[int] = []
    previous: Span | None = None
    for start, end in offsets:
        if start == end:
            tags.append(-100)
            continue
        span = next((s for s in spans if s.start <= start < s.end), None)
        if span is None:
            tags.append(label_ids["O"])
        else:
            prefix = "I" if previous is span else "B"
            tags.append(label_ids[f"{prefix}-{span.label}"])
        previous = span
    return tags


def _batches(rows: list[tuple[list[int], list[int]]], size: int, pad: int) -> Iterator[dict]:
    import torch

    for i in range(0, len(rows), size):
        chunk = rows[i : i + size]
        width = max(len(ids) for ids, _ in chunk)
        ids = [r[0] + [pad] * (width - len(r[0])) for r in chunk]
        tags = [r[1] + [-100] * (width - len(r[1])) for r in chunk]
        mask = [[1] * len(r[0]) + [0] * (width - len(r[0])) for r in chunk]
        yield {
            "input_ids": torch.tensor(ids),
            "attention_mask": torch.tensor(mask),
            "labels": torch.tensor(tags),
        }


def _load_for_training(base_model: Path, labels: list[str]) -> Any:
    from transformers import AutoConfig, AutoModelForTokenClassification

    config = AutoConfig.from_pretrained(base_model)
    same_head = list((config.id2label or {}).values()) == labels
    return AutoModelForTokenClassification.from_pretrained(
        base_model,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
        ignore_mismatched_sizes=not same_head,
    )


def train_annotator(
    train: Corpus,
    validation: Corpus | None,
    base_model: Path,
    settings: NerSettings,
    out_dir: Path,
) -> Path:
    """Fine-tune ``base_model`` for token classification on ``train``; save to ``out_dir``."""
    import torch
    from transformers import AutoTokenizer

    del validation  # the stand-in trains for a fixed number of epochs
    torch.manual_seed(settings.seed)
    labels = bio_labels(train.labels)
    label_ids = {lab: i for i, lab in enumerate(labels)}
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = _load_for_training(base_model, labels)
    rows = [
        (ids, _tag(offsets, doc.spans, label_ids))
        for doc in train.documents
        for ids, offsets in _encode(tokenizer, doc, settings.max_length)
    ]
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    rng = random.Random(settings.seed)
    model.train()
    for _ in range(settings.epochs):
        rng.shuffle(rows)
        for batch in _batches(rows, settings.batch_size, tokenizer.pad_token_id or 0):
            loss = model(**batch).loss
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    (out_dir / "ner_labels.json").write_text(json.dumps(sorted(train.labels)), encoding="utf-8")
    return out_dir


def _word_tags(offsets: list, tags: list[str], text: str) -> list[tuple[int, int, str]]:
    """Sub-word tags folded into words: a word takes its first piece's tag, all its characters."""
    words: list[tuple[int, int, str]] = []
    for (start, end), tag in zip(offsets, tags, strict=True):
        if start == end:
            continue
        joined = words and start == words[-1][1] and start > 0
        if joined and text[start].isalnum() and text[start - 1].isalnum():
            words[-1] = (words[-1][0], end, words[-1][2])
            continue
        words.append((start, end, tag))
    return words


def _spans_from_tags(offsets: list, tags: list[str], text: str) -> list[Span]:
    spans: list[Span] = []
    current: list[int] | None = None
    label = ""
    for start, end, tag in _word_tags(offsets, tags, text):
        if tag.startswith("I-") and current is not None and tag[2:] == label:
            current[1] = end
            continue
        if current is not None:
            spans.append(Span(start=current[0], end=current[1], label=label))
            current = None
        if tag != "O":
            current, label = [start, end], tag[2:]
    if current is not None:
        spans.append(Span(start=current[0], end=current[1], label=label))
    return spans


def machine_annotate(model_dir: Path, corpus: Corpus) -> Corpus:
    """Tag every document of ``corpus`` with the model in ``model_dir`` (spans replaced)."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForTokenClassification.from_pretrained(model_dir).eval()
    id2label = model.config.id2label
    labels = json.loads((model_dir / "ner_labels.json").read_text(encoding="utf-8"))
    documents = []
    with torch.no_grad():
        for doc in corpus.documents:
            spans: list[Span] = []
            for ids, offsets in _encode(tokenizer, doc, 128):
                logits = model(input_ids=torch.tensor([ids])).logits[0]
                tags = [id2label[int(i)] for i in logits.argmax(-1)]
                spans.extend(_spans_from_tags(offsets, tags, doc.text))
            documents.append(Document.model_validate({**doc.model_dump(), "spans": spans}))
    return Corpus(documents=tuple(documents), labels=tuple(labels))


def init_token_classifier(
    base_model: Path, labels: tuple[str, ...], out_dir: Path, seed: int
) -> Path:
    """A token classifier over ``labels`` from ``base_model`` with a fresh, seeded head."""
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(seed)
    model = _load_for_training(base_model, bio_labels(labels))
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(base_model).save_pretrained(out_dir)
    (out_dir / "ner_labels.json").write_text(json.dumps(sorted(labels)), encoding="utf-8")
    return out_dir
