"""The restricted output vocabulary (``[adapt] vocabulary = "corpus"``): the sliced layer
scores the kept ids exactly as the full one does, training and generation stay inside the set,
the id mapping round-trips, and the set travels with the adapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM, AutoTokenizer

from shared.errors import ConfigError
from site_agent.adapt.output_vocabulary import (
    VOCABULARY_FILE,
    OutputVocabulary,
    corpus_vocabulary,
    read_vocabulary,
    restrict_output_layer,
    restricted_labels,
)
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.train import adapt_generator
from site_agent.generate.backend import PromptJob
from site_agent.generate.hf_backend import HFBackend
from site_agent.generate.settings import GenerationSettings
from tests.tiny_models import tiny_causal_lm

TEXTS = [f"Paciente de {n} años ingresa en el Hospital {n % 3} con fiebre." for n in range(12)]
OTHER = ["Médico: Ignacio Navarro Cuéllar."]
TAGS = ("<FECHAS>", "</FECHAS>")


@pytest.fixture(scope="module", params=["llama", "gpt2"])  # untied and tied output layers
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp(request.param)
    return tiny_causal_lm(root / "lm", TEXTS, arch=request.param)


@pytest.fixture(scope="module")
def adapted(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    settings = AdaptSettings(
        base_model=str(base),
        batch_size=4,
        max_steps=3,
        max_length=32,
        quantization="none",
        learning_rate=1e-2,
        vocabulary="corpus",
    )
    tagged = [f"{t} <FECHAS>3/4/20</FECHAS>" for t in TEXTS]
    out = tmp_path_factory.mktemp("adapted")
    adapt_generator(tagged, base, settings, out, added_tokens=TAGS, vocabulary_texts=OTHER)
    return out / "adapter"


def test_restricted_logits_equal_the_full_models_on_the_kept_ids(base: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(base).eval()
    tokenizer = AutoTokenizer.from_pretrained(base)
    inputs = tokenizer(TEXTS[:3], return_tensors="pt", padding=True)
    with torch.no_grad():
        full = model(**inputs).logits
    vocabulary = corpus_vocabulary(tokenizer, TEXTS[:2])
    embedding_before = model.get_input_embeddings().weight.clone()
    restrict_output_layer(model, vocabulary)
    with torch.no_grad():
        restricted = model(**inputs).logits
    assert restricted.shape[-1] == len(vocabulary) < full.shape[-1]
    assert torch.allclose(restricted, full[..., list(vocabulary.ids)], atol=1e-6)
    assert torch.equal(model.get_input_embeddings().weight, embedding_before)


def test_the_set_holds_the_texts_and_the_special_tokens(base: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(base)
    vocabulary = corpus_vocabulary(tokenizer, OTHER)
    kept = set(vocabulary.ids)
    assert set(tokenizer(OTHER[0], add_special_tokens=False)["input_ids"]) <= kept
    assert {tokenizer.eos_token_id, tokenizer.pad_token_id} <= kept
    assert not set(tokenizer(TEXTS[0], add_special_tokens=False)["input_ids"]) <= kept


def test_adapter_records_the_set_and_reloads_with_it(base: Path, adapted: Path) -> None:
    record = json.loads((adapted.parent / "adapt.json").read_text())
    vocabulary = read_vocabulary(adapted)
    assert vocabulary is not None
    assert record["vocabulary_size"] == len(vocabulary)
    assert record["vocabulary_sha256"] == vocabulary.sha256
    tokenizer = AutoTokenizer.from_pretrained(adapted)
    texts = [f"{t} <FECHAS>3/4/20</FECHAS>" for t in TEXTS] + OTHER
    assert vocabulary == corpus_vocabulary(tokenizer, texts)
    backend = HFBackend(base, adapted, GenerationSettings(), max_new_tokens=4)
    assert backend.model.get_output_embeddings().weight.shape[0] == len(vocabulary)


def _record_decoded_rows(backend: HFBackend) -> tuple[list[torch.Tensor], Any]:
    """Every tensor of sampled rows the backend decodes, and the real decoder."""
    drawn: list[torch.Tensor] = []
    original = backend.restricted.decode

    def spy(rows: torch.Tensor) -> torch.Tensor:
        drawn.append(rows.clone())
        return original(rows)

    backend.restricted.decode = spy  # type: ignore[method-assign]
    return drawn, original


def test_generation_never_leaves_the_set(base: Path, adapted: Path) -> None:
    vocabulary = read_vocabulary(adapted)
    assert vocabulary is not None
    settings = GenerationSettings(top_p=1.0, min_new_tokens=12)  # the whole set is eligible
    backend = HFBackend(base, adapted, settings, max_new_tokens=12)
    # a prompt token outside the set is still read (input-only row)
    outside = next(
        t for t, i in backend.tokenizer.get_vocab().items() if i not in set(vocabulary.ids)
    )
    prompt = backend.tokenizer.convert_tokens_to_string([outside]) + " Paciente"
    drawn, original = _record_decoded_rows(backend)
    texts = backend.generate([PromptJob(prompt, 4, 0), PromptJob("Hospital", 2, 1)])
    assert [len(t) for t in texts] == [4, 2] and backend.tokens_generated > 0
    rows = torch.cat([r.flatten() for r in drawn])
    assert int(rows.max()) < len(vocabulary)  # never an input-only row, so never outside
    assert set(original(rows).tolist()) <= set(vocabulary.ids)


def test_continuous_batching_never_leaves_the_set(base: Path, adapted: Path) -> None:
    """The refill loop (``HFBackend.notes``) samples in the restricted row space too."""
    from site_agent.generate.backend import NoteJob

    vocabulary = read_vocabulary(adapted)
    assert vocabulary is not None
    settings = GenerationSettings(top_p=1.0, min_new_tokens=6, batch_size=2)
    backend = HFBackend(base, adapted, settings, max_new_tokens=10)
    drawn, original = _record_decoded_rows(backend)
    jobs = [NoteJob(k, prompt, 40 + k) for k, prompt in enumerate(["Paciente", "Hospital"] * 3)]
    notes = dict(backend.notes(jobs))
    assert sorted(notes) == list(range(6)) and backend.tokens_generated >= 6 * 6
    rows = torch.cat([r.flatten() for r in drawn])
    assert int(rows.max()) < len(vocabulary)
    assert set(original(rows).tolist()) <= set(vocabulary.ids)


def test_sampled_rows_map_to_kept_ids_only(base: Path, adapted: Path) -> None:
    """The row space: what ``generate`` returns decodes to kept ids (checked on the raw rows,
    not through re-tokenised text)."""
    vocabulary = read_vocabulary(adapted)
    assert vocabulary is not None
    backend = HFBackend(base, adapted, GenerationSettings(top_p=1.0), max_new_tokens=10)
    encoded = backend.tokenizer(["Paciente de"] * 6, return_tensors="pt", padding=True)
    rows = backend.restricted.encode(encoded["input_ids"])
    torch.manual_seed(0)
    with torch.inference_mode():
        out = backend.model.generate(
            input_ids=rows, attention_mask=encoded["attention_mask"], **backend.kwargs
        )
    new = out[:, rows.shape[1] :]
    assert int(new.max()) < len(vocabulary)
    assert set(backend.restricted.decode(new).flatten().tolist()) <= set(vocabulary.ids)


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.integers(0, 999), min_size=1, max_size=200),
    st.lists(st.integers(0, 10_000), max_size=50),
)
def test_id_round_trip(kept: set[int], picks: list[int]) -> None:
    vocabulary = OutputVocabulary(tuple(sorted(kept)), 1000)
    ids = [vocabulary.ids[p % len(vocabulary)] for p in picks]
    rows = vocabulary.to_restricted(ids)
    assert vocabulary.to_full(rows) == ids
    assert all(0 <= r < len(vocabulary) for r in rows)
    labels = torch.tensor([[-100, *ids]], dtype=torch.long)
    mapped = restricted_labels(labels, vocabulary.lookup())
    assert mapped.tolist() == [[-100, *rows]]
    dropped = sorted(set(range(1000)) - kept)[:3]
    if dropped:
        outside = restricted_labels(torch.tensor(dropped), vocabulary.lookup())
        assert outside.tolist() == [-100] * len(dropped)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda body: body | {"sha256": "0" * 64}, "sha256 does not match"),
        (lambda body: body | {"ids": [3, 1]}, "ascending"),
        (lambda body: body | {"ids": [body["full_size"]]}, "must lie in"),
        (lambda body: {"ids": body["ids"]}, "full_size"),
    ],
)
def test_a_tampered_vocabulary_file_is_refused(
    adapted: Path, tmp_path: Path, edit: object, message: str
) -> None:
    body = json.loads((adapted / VOCABULARY_FILE).read_text())
    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / VOCABULARY_FILE).write_text(json.dumps(edit(body)))  # type: ignore[operator]
    with pytest.raises(ConfigError, match=message):
        read_vocabulary(folder)


@pytest.mark.parametrize("engine", ["ctranslate2", "openvino"])
def test_a_backend_that_cannot_sample_a_restricted_adapter_refuses_it(
    adapted: Path, engine: str
) -> None:
    from site_agent.generate.backend import refuse_restricted, samples_restricted

    assert not samples_restricted(engine)  # the backend's own fact, from its registration
    with pytest.raises(ConfigError, match=f"the {engine} backend cannot honour.*'full'"):
        refuse_restricted(engine, adapted)
    refuse_restricted(engine, None)
    refuse_restricted("hf", adapted)  # transformers samples within the kept rows


def test_vllm_masks_to_the_set() -> None:
    from site_agent.generate.vllm_backend import sampling_kwargs

    kwargs = sampling_kwargs(GenerationSettings(), 2, 16, 1, allowed=(0, 4, 9))
    assert kwargs["allowed_token_ids"] == [0, 4, 9]
    assert "allowed_token_ids" not in sampling_kwargs(GenerationSettings(), 2, 16, 1)


def test_widened_layer_under_the_mask_is_the_restricted_model(base: Path, adapted: Path) -> None:
    """What vLLM is given (full width, the set as allowed ids) has the restricted model's
    distribution."""
    from site_agent.generate.merge import load_adapted

    tokenizer, narrow = load_adapted(base, adapted)
    _tokenizer, wide = load_adapted(base, adapted, full_width=True)
    vocabulary = read_vocabulary(adapted)
    assert vocabulary is not None
    inputs = tokenizer(TEXTS[:2], return_tensors="pt", padding=True)
    with torch.no_grad():
        a = narrow(**inputs).logits.log_softmax(-1)
        b = wide(**inputs).logits[..., list(vocabulary.ids)].log_softmax(-1)
    assert torch.allclose(a, b, atol=1e-5)
