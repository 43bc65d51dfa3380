"""The vLLM backend for real, on machines with CUDA and vllm installed (skipped elsewhere)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from site_agent.generate.plan import GenerationPlan
from site_agent.generate.resumable import generate_corpus
from site_agent.generate.settings import GenerationSettings

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available() or importlib.util.find_spec("vllm") is None,
        reason="needs CUDA and vllm (pip install 'deid-synth[gpu]')",
    ),
]


def test_vllm_backend_generates_planned_documents(tmp_path: Path) -> None:
    from tests.tiny_models import tiny_causal_lm

    model = tiny_causal_lm(tmp_path / "llama", ["Paciente de 70 años ingresa."], hidden=64)
    plan = GenerationPlan(
        prompts=("Paciente de 70", "Ingresa en"), samples=(3, 2), max_new_tokens=16
    )
    settings = GenerationSettings(backend="vllm", batch_size=4, min_new_tokens=2)
    corpus = generate_corpus(plan, model, None, settings, tmp_path / "syn.jsonl")
    assert [d.id for d in corpus.documents] == [
        "syn-0-0",
        "syn-1-0",
        "syn-0-1",
        "syn-1-1",
        "syn-0-2",
    ]
    assert corpus.provenance.notes["backend"] == "vllm"
