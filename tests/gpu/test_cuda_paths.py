"""The paths a GPU site takes, chosen automatically on CUDA: QLoRA (NF4 base + LoRA) adaptation,
generation with the adapter on the GPU, and the annotator trained on the GPU.

Marked ``gpu`` (CI deselects them: it has no GPU); they skip where CUDA is not visible. Run on a
CUDA machine with ``pytest -m gpu tests/gpu``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

TEXTS = [f"Paciente de {n} años ingresa en el Hospital {n % 3} con fiebre." for n in range(32)]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_models import tiny_causal_lm

    return tiny_causal_lm(tmp_path_factory.mktemp("base") / "llama", TEXTS)


@pytest.fixture(scope="module")
def adapted(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from site_agent.adapt.settings import AdaptSettings
    from site_agent.adapt.train import adapt_generator

    pytest.importorskip("bitsandbytes", reason="QLoRA needs bitsandbytes")
    settings = AdaptSettings(
        base_model="tiny", batch_size=4, max_steps=3, max_length=32, learning_rate=1e-2
    )
    out = tmp_path_factory.mktemp("adapt")
    adapt_generator(TEXTS, base, settings, out)
    return out


def test_auto_quantization_is_qlora_on_cuda(adapted: Path) -> None:
    record = json.loads((adapted / "adapt.json").read_text())
    assert (record["quantization"], record["device"], record["dtype"]) == (
        "nf4",
        "cuda",
        "bfloat16",
    )
    assert record["steps"] == 3 and all(math.isfinite(x) for x in record["losses"])


def test_generation_runs_on_the_gpu_with_the_adapter(base: Path, adapted: Path) -> None:
    from site_agent.generate.backend import PromptJob, backend_factory
    from site_agent.generate.settings import GenerationSettings

    settings = GenerationSettings(backend="hf", batch_size=4, seed=3)
    backend = backend_factory("hf")(base, adapted / "adapter", settings, 12)
    assert next(backend.model.parameters()).device.type == "cuda"
    rows = backend.generate([PromptJob("Paciente de", 3, 1), PromptJob("Hospital", 2, 2)])
    assert [len(r) for r in rows] == [3, 2] and all(isinstance(t, str) for r in rows for t in r)


def test_the_annotator_trains_on_the_gpu(tmp_path: Path) -> None:
    from ner.train import train_annotator
    from protocol import Corpus, Document, Span
    from protocol.annotator import AnnotatorSettings
    from tests.tiny_models import tiny_encoder

    names = ["Ana García", "Luis Pérez", "Eva Ruiz", "Juan Soto"]
    docs = []
    for i in range(24):
        name = names[i % 4]
        text = f"Paciente {name} ingresa el día {i + 1}."
        start = text.index(name)
        docs.append(
            Document(
                id=f"d{i}",
                text=text,
                spans=(Span(start=start, end=start + len(name), label="PER"),),
            )
        )
    corpus = Corpus(documents=tuple(docs), labels=("PER",))
    encoder = tiny_encoder(tmp_path / "enc", [d.text for d in docs], hidden=64)
    settings = AnnotatorSettings(epochs=2, batch_size=8, learning_rate=3e-3, min_steps=0, seed=3)
    result = train_annotator(corpus, corpus, encoder, settings, tmp_path / "ann")
    assert result.record.device == "cuda"
    assert all(math.isfinite(e.train_loss) for e in result.record.epochs)
