"""Encoding, batching and backbone lookup: exact offsets, nothing lost, clear errors."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from ner.backbone import check_backbone, load_fast_tokenizer
from ner.features import collate, encode_corpus, length_grouped_batches
from protocol import Corpus, Document
from protocol.annotator import AnnotatorSettings
from shared.errors import ModelUnavailableError
from shared.ner_tokens import IGNORE, iob2_labels, split_words
from tests.ner.conftest import synthetic_corpus


def test_chunks_that_overflow_max_length_are_split_not_truncated(encoder_dir: Path) -> None:
    tokenizer = load_fast_tokenizer(encoder_dir)
    corpus = synthetic_corpus(6, 5, "d")
    tags = iob2_labels(corpus.labels)
    label2id = {t: i for i, t in enumerate(tags)}
    encoded = encode_corpus(corpus, tokenizer, chunk_words=128, max_length=24, label2id=label2id)
    assert max(len(e) for e in encoded) <= 24
    for index, doc in enumerate(corpus.documents):
        parts = [e for e in encoded if e.doc == index]
        assert "".join(p.chunk.text for p in parts) == doc.text
        spans = [
            (s.start + p.chunk.start, s.end + p.chunk.start) for p in parts for s in p.chunk.spans
        ]
        assert spans == [(s.start, s.end) for s in doc.spans]
        labelled = sum(lab != IGNORE for p in parts for lab in (p.labels or []))
        assert labelled == len(split_words(doc.text))


def test_length_grouping_covers_everything_once_and_cuts_padding() -> None:
    rng = random.Random(0)
    lengths = [rng.randint(5, 300) for _ in range(1000)]
    grouped = length_grouped_batches(lengths, 16, random.Random(1), group=True)
    plain = length_grouped_batches(lengths, 16, random.Random(1), group=False)
    for batches in (grouped, plain):
        assert sorted(i for b in batches for i in b) == list(range(1000))

    def padded(batches: list[list[int]]) -> int:
        return sum(len(b) * max(lengths[i] for i in b) for b in batches)

    assert padded(grouped) < 0.7 * padded(plain)


def test_collate_pads_dynamically(encoder_dir: Path) -> None:
    tokenizer = load_fast_tokenizer(encoder_dir)
    corpus = Corpus(documents=(Document(id="a", text="Madrid"), Document(id="b", text="a b c d")))
    encoded = encode_corpus(corpus, tokenizer, 128, 512)
    batch = collate(encoded, pad_id=0)
    assert batch["input_ids"].shape == (2, max(len(e) for e in encoded))
    assert batch["attention_mask"].sum().item() == sum(len(e) for e in encoded)
    assert "labels" not in batch


def test_settings_name_the_offending_fields() -> None:
    assert AnnotatorSettings().model_dump(include={"epochs", "batch_size", "chunk_words"}) == {
        "epochs": 6, "batch_size": 16, "chunk_words": 128,
    }  # fmt: skip
    with pytest.raises(ValidationError, match="grad_accumulation"):
        AnnotatorSettings(batch_size=16, grad_accumulation=3)


@pytest.mark.parametrize(
    ("batch", "accumulation", "cuda", "expected"),
    [(16, None, False, 4), (8, None, False, 2), (16, None, True, 1), (6, None, False, 2),
     (3, None, False, 1), (5, None, False, 1), (16, 8, False, 8), (16, 2, True, 2)],
)  # fmt: skip
def test_accumulation_is_chosen_per_device(
    batch: int, accumulation: int | None, cuda: bool, expected: int
) -> None:
    settings = AnnotatorSettings(batch_size=batch, grad_accumulation=accumulation)
    assert settings.accumulation_for(cuda) == expected
    assert batch % settings.accumulation_for(cuda) == 0
    with pytest.raises(ValidationError, match="epochs"):
        AnnotatorSettings(epochs=0)


def test_backbone_accepts_folders_and_passes_hub_ids_through(
    encoder_dir: Path, tmp_path: Path
) -> None:
    assert check_backbone(encoder_dir) == encoder_dir
    assert check_backbone("PlanTL-GOB-ES/roberta-base-bne") == "PlanTL-GOB-ES/roberta-base-bne"
    with pytest.raises(ModelUnavailableError, match=r"no config\.json"):
        check_backbone(tmp_path)


def test_unloadable_backbone_is_a_clear_error() -> None:
    with pytest.raises(ModelUnavailableError, match="fix:"):
        load_fast_tokenizer("no-such-org/no-such-model-xyz")
