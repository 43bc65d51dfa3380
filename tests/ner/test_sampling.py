"""Under sparse PHI each epoch sees every PHI chunk, a fresh draw of PHI-free ones, and a
weighted loss; the record says so."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch

from ner.features import EncodedChunk
from ner.sampling import EpochSampler, holds_phi, tag_weights
from protocol import Corpus
from shared.ner_tokens import IGNORE, TextChunk
from tests.ner.conftest import FAST, synthetic_corpus
from tests.ner.test_recipe import _free_note


def _chunk(doc: int, labels: list[int]) -> EncodedChunk:
    n = len(labels)
    return EncodedChunk(doc, TextChunk(0, 1, "x"), list(range(n)), [(0, 1)] * n, [0] * n, labels)


def test_sampler_keeps_phi_chunks_and_redraws_phi_free_ones() -> None:
    phi = [_chunk(i, [IGNORE, 0, 1, 2, IGNORE]) for i in range(3)]
    free = [_chunk(10 + i, [IGNORE, 0, 0, IGNORE]) for i in range(30)]
    sampler = EpochSampler(phi + free, phi_free_per_phi=2.0)
    assert sampler.per_epoch == 3 + 6
    rng = random.Random(0)
    seen: set[int] = set()
    draws = []
    for _ in range(20):
        epoch = sampler.draw(rng)
        assert len(epoch) == 9 and all(c in epoch for c in phi)
        drawn = {c.doc for c in epoch if not holds_phi(c)}
        draws.append(drawn)
        seen |= drawn
    assert len({frozenset(d) for d in draws}) > 1  # a fresh draw each epoch
    assert len(seen) > 20  # most PHI-free text is seen across epochs


def test_sampler_without_ratio_sees_everything() -> None:
    chunks = [_chunk(0, [0, 1]), _chunk(1, [0, 0]), _chunk(2, [0, 0])]
    sampler = EpochSampler(chunks, None)
    assert sampler.per_epoch == 3 and sampler.draw(random.Random(0)) == chunks


def test_tag_weights_and_weighted_loss_match_cross_entropy_by_hand() -> None:
    from ner.loop import _loss

    tags = ["O", "B-NAME", "I-NAME"]
    weights = tag_weights(tags, 3.0)
    assert weights is not None and weights.tolist() == [1.0, 3.0, 3.0]
    assert tag_weights(tags, 1.0) is None

    logits = torch.tensor([[[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]])

    class Model:
        def __call__(self, **inputs: Any) -> Any:
            return type("Out", (), {"logits": logits})()

    labels = torch.tensor([[0, 1, IGNORE]])
    loss = _loss(Model(), {"input_ids": labels.clone(), "labels": labels}, weights)
    log_p = torch.log_softmax(logits[0], dim=-1)
    expected = -(1.0 * log_p[0, 0] + 3.0 * log_p[1, 1]) / (1.0 + 3.0)
    assert float(loss) == pytest.approx(float(expected), rel=1e-6)


def test_training_on_sparse_phi_samples_and_weights_what_the_model_sees(
    monkeypatch: pytest.MonkeyPatch, encoder_dir: Path, tmp_path: Path
) -> None:
    import ner.train as train_module

    phi = synthetic_corpus(4, 5, "p")
    free = [_free_note(f"f{i}") for i in range(40)]
    sparse = Corpus(documents=(*phi.documents, *free), labels=phi.labels)
    seen: list[tuple[int, int, list[float] | None]] = []
    real_epoch = train_module.train_epoch

    def train_epoch(model: Any, chunks: list[EncodedChunk], *args: Any, **kwargs: Any) -> Any:
        weights = kwargs["tag_weights"]
        phi_chunks = sum(holds_phi(c) for c in chunks)
        seen.append((phi_chunks, len(chunks), None if weights is None else weights.tolist()))
        return real_epoch(model, chunks, *args, **kwargs)

    monkeypatch.setattr(train_module, "train_epoch", train_epoch)
    settings = FAST.model_copy(update={"epochs": 2, "stall_restarts": 0})
    result = train_module.train_annotator(sparse, None, encoder_dir, settings, tmp_path / "m")
    recipe = result.record.recipe
    assert recipe is not None and recipe.sparse and recipe.phi_free_per_phi == 1.0
    assert recipe.documents_without_phi == pytest.approx(40 / 44)
    phi_chunks = recipe.phi_chunks
    # every epoch: all PHI chunks and as many PHI-free ones, not the 40 PHI-free notes
    assert [(p, n) for p, n, _ in seen] == [(phi_chunks, 2 * phi_chunks)] * 2
    weights = seen[0][2]
    if recipe.entity_weight == 1.0:
        assert weights is None
    else:
        assert weights is not None and weights[0] == 1.0 and weights[1] == recipe.entity_weight

    dense = train_module.train_annotator(phi, None, encoder_dir, settings, tmp_path / "d")
    assert dense.record.recipe is not None and not dense.record.recipe.sparse


@pytest.mark.parametrize(("new_head", "scale"), [(True, 10.0), (False, 1.0)])
def test_a_new_head_learns_at_ten_times_the_encoder_rate(
    encoder_dir: Path, new_head: bool, scale: float
) -> None:
    from ner.train import _load_model, _optimiser

    model, fresh = _load_model(encoder_dir, ["O", "B-X", "I-X"])
    assert fresh  # the tiny encoder has no token-classification head
    optimizer, _ = _optimiser(model, FAST, steps=10, new_head=new_head)
    head = {id(p) for n, p in model.named_parameters() if n.startswith("classifier.")}
    for group in optimizer.param_groups:
        if group["params"]:
            is_head = all(id(p) in head for p in group["params"])
            expected = FAST.learning_rate * (scale if is_head else 1.0)
            assert group["lr"] == pytest.approx(expected)
