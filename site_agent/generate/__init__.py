"""Synthesis: sample notes from the adapted generator (vLLM on GPU, transformers on CPU)."""

from site_agent.generate.backend import (
    GenerationBackend,
    PromptJob,
    choose_backend,
    register_backend,
)
from site_agent.generate.plan import (
    GenerationPlan,
    first_words,
    plan_for_model,
    plan_generation,
)
from site_agent.generate.run import generate_corpus
from site_agent.generate.settings import GenerationSettings

__all__ = [
    "GenerationBackend",
    "GenerationPlan",
    "GenerationSettings",
    "PromptJob",
    "choose_backend",
    "first_words",
    "generate_corpus",
    "plan_for_model",
    "plan_generation",
    "register_backend",
]
