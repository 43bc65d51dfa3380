"""Which engine ``[generation] backend = "auto"`` picks on a CPU, from the CPU's features.

Measured (``benchmarks/generator.py``, batch 16, 64-128 new tokens, top-p 0.95, idle):

- CPUs with native bf16 (AMX or AVX-512 BF16): transformers in bf16 beat CTranslate2 int8
  (README benchmark: Gemma 3 270M top-p 165 tok/s with transformers; CTranslate2 slower).
- An AVX-512 CPU without BF16, VNNI or AMX (issue 31's table): CTranslate2 int8 top-p 128.9
  tok/s against transformers' 52.0 for SmolLM2-135M, 39.7 against 33.8 for Gemma 3 270M.

- AMD EPYC with AVX-512 BF16, no AMX (2026-11-27, each transformers row through an adapter as
  the pipeline runs it): transformers top-p 203-211 tok/s for Gemma 3 (414-495 with the corpus
  vocabulary), CTranslate2 int8 67-68, OpenVINO GenAI 143; SmolLM2 318-372 (395-486),
  CTranslate2 190-194, OpenVINO GenAI 418-423.

- AMD EPYC with AVX2, no AVX-512 (2026-11-28, batch 8): Gemma 3 transformers float32 top-p
  27.0 tok/s, 60.9 with the corpus vocabulary, CTranslate2 int8 28.1; SmolLM2 see
  ``site_agent/adapt/cost.py``.

So: transformers where bf16 is native, CTranslate2 where it is not and is installed, for an
adapter with the full output vocabulary. An adapter with a restricted output vocabulary is
sampled by transformers (CTranslate2 and OpenVINO refuse it); the generator recipe restricts
the vocabulary where ``auto`` would have picked CTranslate2 if transformers within the corpus
vocabulary was measured faster on that kind of CPU (``site_agent.adapt.recipe.choose_vocabulary``).
OpenVINO GenAI is never picked by ``auto``: it is an optional install in an environment of its
own, and it beat transformers only on SmolLM2 with the full vocabulary (1.13-1.32×), never
the corpus-vocabulary row; it stays selectable for that case.
"""

from __future__ import annotations

from shared.cpu_features import CpuFeatures


def cpu_engine(
    features: CpuFeatures, installed: frozenset[str], restricted: bool
) -> tuple[str, str]:
    """(engine, why) for this CPU; ``installed``: importable optional engines."""
    if restricted:
        return "hf", "the adapter restricts the output vocabulary: transformers samples within it"
    if features.bf16_native:
        return "hf", "native bf16 (AMX or AVX-512 BF16): transformers in bf16 measured fastest"
    if "ctranslate2" in installed:
        return "ctranslate2", "no native bf16: CTranslate2 int8 measured 1.2-2.5x transformers"
    return "hf", "no native bf16 and CTranslate2 not installed: transformers in float32"
