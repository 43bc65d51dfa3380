"""Settings validation, target-module choice and training windows."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from transformers import AutoModelForCausalLM, AutoTokenizer

from site_agent.adapt.data import (
    collate,
    document_windows,
    epoch_order,
    phi_bearing,
    repeat_phi_windows,
    tokenise_documents,
)
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.targets import target_modules_for
from tests.tiny_models import tiny_causal_lm

TEXTS = ["Paciente de 70 años ingresa en el Hospital General.", "", "Alta el 3 de marzo."]


def test_defaults_are_the_seed_lora_and_the_measured_run_shape() -> None:
    s = AdaptSettings(base_model="any")
    assert s.seed == 13 and s.max_length == 256  # every measured experiment: 4 x 256
    assert (s.lora_r, s.lora_alpha, s.lora_dropout) == (8, 32, 0.05)
    assert (s.weight_decay, s.learning_rate, s.batch_size, s.epochs) == (0.1, 1e-4, 4, 2)
    assert s.phi_window_repeat is None  # the recipe's


@pytest.mark.parametrize(
    ("field", "value"),
    [("lora_r", 0), ("lora_dropout", 1.5), ("quantization", "int3"), ("target_modules", ())],
)
def test_invalid_settings_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        AdaptSettings.model_validate({field: value})


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def tiny(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_causal_lm(tmp_path_factory.mktemp(request.param), TEXTS, arch=request.param)


def test_auto_targets_exist_in_the_model(tiny: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny)
    targets = target_modules_for(model)
    leaves = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    assert targets and set(targets) <= leaves
    assert "lm_head" not in targets


def test_unknown_architecture_falls_back_to_linear_layers(tiny: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny)
    setattr(model.config, "model_type", "never-heard-of-it")  # noqa: B010
    targets = target_modules_for(model)
    if model.config.architectures == ["LlamaForCausalLM"]:
        assert set(targets) == {"q_proj", "k_proj", "v_proj", "o_proj"} | {
            "gate_proj",
            "up_proj",
            "down_proj",
        }
    assert "lm_head" not in targets


def test_windows_cover_each_document_without_crossing(tiny: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    windows = tokenise_documents(TEXTS, tokenizer, max_length=8)
    assert all(1 < len(w) <= 8 for w in windows)
    expected: list[int] = []
    for text in TEXTS:
        if text:
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            expected += [tokenizer.bos_token_id, *ids, tokenizer.eos_token_id]
    flat = [t for w in windows for t in w]
    assert flat == [t for t in expected if t is not None][: len(flat)]
    assert len(flat) >= len(expected) - len(TEXTS)  # only 1-token tails may be dropped


def test_collate_masks_padding_out_of_the_loss() -> None:
    batch = collate([[5, 6, 7], [8]], pad_id=0)
    assert batch["labels"].tolist() == [[5, 6, 7], [8, -100, -100]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]


def test_epoch_order_depends_only_on_seed_and_epoch() -> None:
    assert epoch_order(10, 1, 2) == epoch_order(10, 1, 2)
    assert sorted(epoch_order(10, 1, 2)) == list(range(10))
    assert epoch_order(10, 1, 2) != epoch_order(10, 1, 3)


class _Chars:
    """A tokenizer whose tokens are characters (ord), no BOS/EOS."""

    bos_token_id = None
    eos_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        return {"input_ids": [ord(c) for c in text]}


def test_phi_windows_by_marker_or_by_note_and_their_repeats() -> None:
    texts = ["abcdef", "xy", "PQ"]  # windows of 4: abcd, ef | xy | PQ
    windows, sources = document_windows(texts, _Chars(), 4)
    assert windows == [[97, 98, 99, 100], [101, 102], [120, 121], [80, 81]]
    assert sources == [0, 0, 1, 2]
    # markers (a placeholder token, here "e"): only the window that holds one
    assert phi_bearing(windows, sources, [True, False, False], [ord("e")]) == [
        False, True, False, False,
    ]  # fmt: skip
    # no markers (annotate mode): every window of a note with PHI
    assert phi_bearing(windows, sources, [True, False, True]) == [True, True, False, True]
    seen = repeat_phi_windows(windows, [False, True, False, True], 3)
    assert seen[:4] == windows and seen[4:] == [[101, 102], [80, 81], [101, 102], [80, 81]]
