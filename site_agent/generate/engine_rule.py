"""Which engine ``[generation] backend = "auto"`` picks on a CPU, from the CPU's features.

Measured with ``benchmarks/generator.py`` (top-p 0.95, idle; the runs, their CPUs and dates
are in ``benchmarks/README.md`` and the rates the plan prices with in
``site_agent/calibration/measurements.toml``): where bf16 is native (AMX or AVX-512 BF16),
transformers in bf16 beat CTranslate2 int8 for both embedded generators, OpenVINO GenAI too
except on SmolLM2 with the full vocabulary; on an AVX-512 CPU without BF16, VNNI or AMX, and on
an AVX2-only CPU, CTranslate2 int8 beat transformers' float32 kernels with the full output
vocabulary, while transformers within the corpus vocabulary beat both.

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
