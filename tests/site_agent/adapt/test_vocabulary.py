"""Tags and placeholders as whole tokens: added to the tokenizer, their embedding rows trained
with the adapter (tied and untied output layers), and restored exactly when a backend loads
the adapter onto a freshly resized base."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.train import adapt_generator
from site_agent.adapt.vocabulary import trainable_rows
from site_agent.generate.merge import adds_tokens, load_adapted
from tests.tiny_models import tiny_causal_lm

TAGS = ("<FECHAS>", "</FECHAS>", "{{FECHAS:1}}")
TEXTS = ["Dr. Gil vino el <FECHAS>3/4/20</FECHAS>.", "Cita ({{FECHAS:1}}), sin cambios."] * 3


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def adapted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp(request.param)
    base = tiny_causal_lm(root / "lm", ["Dr. Gil vino el 3/4/20, sin cambios."], arch=request.param)
    settings = AdaptSettings(
        base_model=str(base),
        batch_size=2,
        max_steps=3,
        max_length=32,
        quantization="none",
        vocabulary="full",
    )
    result = adapt_generator(TEXTS, str(base), settings, root / "out", added_tokens=TAGS)
    return base, Path(result.adapter_dir)


def test_each_marker_is_one_token_in_any_context(adapted: tuple[Path, Path]) -> None:
    base, adapter = adapted
    assert adds_tokens(adapter)
    tokenizer, _model = load_adapted(base, adapter)
    for tag in TAGS:
        for context in (f"Dr. {tag}Gil", f"(x{tag}), y", f"\n{tag}\n"):
            assert tag in tokenizer.tokenize(context), context
        ids = tokenizer(f"a {tag}b", add_special_tokens=False)["input_ids"]
        assert tag in tokenizer.decode(ids)


def test_trained_rows_come_back_whatever_the_resize_drew(adapted: tuple[Path, Path]) -> None:
    base, adapter = adapted
    torch.manual_seed(1)
    tokenizer, first = load_adapted(base, adapter)
    torch.manual_seed(2)
    _tokenizer, second = load_adapted(base, adapter)
    new = tokenizer.convert_tokens_to_ids(list(TAGS))
    for layer in ("get_input_embeddings", "get_output_embeddings"):
        rows_a = getattr(first, layer)().weight[new]
        rows_b = getattr(second, layer)().weight[new]
        assert torch.equal(rows_a, rows_b), layer


_ROWS_OF_A_FRESH_LOAD = """
import sys
from pathlib import Path
from transformers import AutoModelForCausalLM
from site_agent.adapt.vocabulary import trainable_rows
from tests.tiny_models import tiny_causal_lm
folder = tiny_causal_lm(Path(sys.argv[1]), [], arch=sys.argv[2])
print(" ".join(sorted(trainable_rows(AutoModelForCausalLM.from_pretrained(folder), [1, 2]))))
"""


def test_untied_output_rows_are_trained_too(tmp_path: Path) -> None:
    """In a fresh interpreter: inside the whole suite (after tests/security's console-script,
    export-gate, site-reply and verifier files, not pinned down further) a GPT-2 load in this
    process came back untied; the question here is what a fresh load gives."""
    repo = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    for arch, expected in (("llama", "embed_tokens lm_head"), ("gpt2", "wte")):
        done = subprocess.run(
            [sys.executable, "-c", _ROWS_OF_A_FRESH_LOAD, str(tmp_path / arch), arch],
            capture_output=True, text=True, env=env, cwd=repo, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split("\n")[-2] == expected, (arch, done.stdout[-500:])


@pytest.mark.parametrize("token_lr", [1e-4, 5e-3])
def test_added_rows_learn_at_their_own_rate(tmp_path: Path, token_lr: float) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from site_agent.adapt.model import attach_lora
    from site_agent.adapt.quantization import choose_quantization
    from site_agent.adapt.train import _optimiser
    from site_agent.adapt.vocabulary import TOKEN_ROWS, add_tokens

    base = tiny_causal_lm(tmp_path / "lm", ["Dr. Gil vino el 3/4/20."], arch="llama")
    model = AutoModelForCausalLM.from_pretrained(base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    rows = trainable_rows(model, add_tokens(tokenizer, model, TAGS))
    settings = AdaptSettings(
        base_model=str(base), quantization="none", token_learning_rate=token_lr
    )
    plan = choose_quantization(False, "none", False, False)
    model = attach_lora(model, settings, plan, rows)
    optimizer, _ = _optimiser(model, settings, total_steps=10)
    names = {id(p): n for n, p in model.named_parameters()}
    seen_rows = seen_lora = 0
    for group in optimizer.param_groups:
        for param in group["params"]:
            is_rows = TOKEN_ROWS in names[id(param)]
            expected = token_lr if is_rows else settings.learning_rate
            assert group["lr"] == pytest.approx(expected), names[id(param)]
            seen_rows += is_rows
            seen_lora += not is_rows
    assert seen_rows == 2 and seen_lora > 0  # input and output rows (llama: untied)
    trainable = sum(p.requires_grad for p in model.parameters())
    assert seen_rows + seen_lora == trainable
