"""bfloat16 autocast (forced on) scores a trained tiny annotator as float32 does, within
tolerance; the precision used is recorded in training and inference provenance; the CPU probe
reads the flags that decide it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForTokenClassification

from ner.backbone import load_fast_tokenizer
from ner.features import collate, encode_corpus
from ner.loop import autocast
from ner.validate import ValidationSet, validation_metrics
from protocol import Corpus
from protocol.annotator import AnnotatorSettings
from shared.cpu_features import cpu_features, parse_cpuinfo

SCORES = ("precision", "recall", "f1", "entity_f1", "exact_f1", "overlap_f1")


@pytest.fixture(scope="module")
def scored(trained, pattern_corpora: tuple[Corpus, Corpus]) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    model_dir = Path(trained.model_dir)
    model = AutoModelForTokenClassification.from_pretrained(model_dir).eval()
    tokenizer = load_fast_tokenizer(model_dir, align=False)
    _, validation = pattern_corpora
    tags = list(trained.record.tags)
    chunks = encode_corpus(validation, tokenizer, 24, 512, {t: i for i, t in enumerate(tags)})
    return model, tokenizer, ValidationSet(validation, chunks), tags


def test_bf16_scores_match_float32_within_tolerance(scored: tuple[object, ...]) -> None:
    model, tokenizer, data, tags = scored
    pad = tokenizer.pad_token_id  # type: ignore[attr-defined]
    fp32 = validation_metrics(model, data, tags, AnnotatorSettings(bf16=False), pad)  # type: ignore[arg-type]
    bf16 = validation_metrics(model, data, tags, AnnotatorSettings(bf16=True), pad)  # type: ignore[arg-type]
    assert fp32.f1 > 0.5  # a model that found the entities, so agreement means something
    for name in SCORES:
        assert abs(getattr(bf16, name) - getattr(fp32, name)) <= 0.02, name


def test_bf16_probabilities_match_float32_within_tolerance(scored: tuple[object, ...]) -> None:
    model, tokenizer, data, _tags = scored
    batch = collate(data.chunks[:8], tokenizer.pad_token_id)  # type: ignore[attr-defined]
    batch.pop("labels", None)
    device = torch.device("cpu")
    with torch.inference_mode():
        exact = model(**batch).logits.float().softmax(-1)  # type: ignore[operator]
        with autocast(device, True):
            low = model(**batch).logits  # type: ignore[operator]
    assert low.dtype == torch.bfloat16  # autocast really ran the model in bf16
    assert (low.float().softmax(-1) - exact).abs().max() < 0.03


def test_inference_records_its_precision(trained, pattern_corpora: tuple[Corpus, Corpus]) -> None:  # type: ignore[no-untyped-def]
    from ner.infer import machine_annotate

    out = machine_annotate(Path(trained.model_dir), pattern_corpora[1])
    assert out.provenance.notes["bf16"] == "no"  # the annotator was trained with bf16=False


CPUINFO = """processor\t: 0
model name\t: Example CPU
flags\t\t: fpu avx2 avx512f avx512_vnni {extra}
processor\t: 1
model name\t: Example CPU
flags\t\t: fpu
"""


@pytest.mark.parametrize(
    ("extra", "bf16", "amx"),
    [("", False, False), ("avx512_bf16", True, False), ("amx_tile amx_bf16", True, True)],
)
def test_cpu_flags_decide_native_bf16(extra: str, bf16: bool, amx: bool) -> None:
    features = parse_cpuinfo(CPUINFO.format(extra=extra))
    assert features.model == "Example CPU"
    assert features.bf16_native is bf16 and features.has("AMX") is amx
    assert (
        "AVX2 yes" in features.summary() and f"AMX {'yes' if amx else 'no'}" in features.summary()
    )


def test_this_cpu_is_read() -> None:
    if not Path("/proc/cpuinfo").is_file():
        pytest.skip("no /proc/cpuinfo on this system")
    assert cpu_features().model and cpu_features().flags


def _tiny_bert() -> torch.nn.Module:
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, num_labels=5, attn_implementation="sdpa",
    )  # fmt: skip
    return BertForTokenClassification(config)


def test_bf16_training_attends_eagerly_on_cpu_and_gives_its_attention_back() -> None:
    from ner.loop import TRAINING_ATTENTION, training_attention

    model, cpu = _tiny_bert(), torch.device("cpu")
    assert model.config._attn_implementation == "sdpa"
    with training_attention(model, cpu, bf16=True):
        assert model.config._attn_implementation == TRAINING_ATTENTION
    assert model.config._attn_implementation == "sdpa"  # prediction keeps the fused kernel
    with training_attention(model, cpu, bf16=False):
        assert model.config._attn_implementation == "sdpa"  # float32: nothing switched


def test_a_bf16_training_step_matches_float32_within_tolerance() -> None:
    """The loss and the gradients of one step under bf16 autocast with the training attention
    are float32's (sdpa, no autocast) within bf16's precision, padding included."""
    from ner.loop import _loss, training_attention

    torch.manual_seed(1)
    ids = torch.randint(5, 120, (4, 40))
    mask = torch.ones_like(ids)
    mask[1:, 30:] = 0
    labels = torch.randint(0, 5, (4, 40)).masked_fill(mask == 0, -100)
    inputs = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    cpu, grads, losses = torch.device("cpu"), [], []
    for bf16 in (False, True):
        model = _tiny_bert()
        with training_attention(model, cpu, bf16), autocast(cpu, bf16):
            loss = _loss(model, dict(inputs), None)
        loss.backward()
        losses.append(float(loss))
        kept = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
        grads.append(torch.cat(kept))
    assert losses[1] == pytest.approx(losses[0], rel=0.02)
    cosine = torch.nn.functional.cosine_similarity(grads[0], grads[1], dim=0)
    assert cosine > 0.99
