"""The tiny test models load like real checkpoints and produce offsets and text."""

from pathlib import Path

from transformers import AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

from tests.tiny_models import SAMPLE_TEXT, tiny_causal_lm, tiny_encoder


def test_tiny_encoder_loads_for_token_classification(tmp_path: Path) -> None:
    path = tiny_encoder(tmp_path / "enc")
    tok = AutoTokenizer.from_pretrained(path)
    enc = tok(SAMPLE_TEXT, return_offsets_mapping=True)
    assert enc["offset_mapping"][1][0] == 0
    model = AutoModelForTokenClassification.from_pretrained(path, num_labels=3)
    assert model.config.num_labels == 3


def test_tiny_causal_lm_generates(tmp_path: Path) -> None:
    for arch in ("llama", "gpt2"):
        path = tiny_causal_lm(tmp_path / arch, arch=arch)
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path)
        ids = tok("Paciente de 70", return_tensors="pt")
        out = model.generate(**ids, max_new_tokens=5, do_sample=True, top_p=0.95)
        assert out.shape[1] > ids["input_ids"].shape[1]
