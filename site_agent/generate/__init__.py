"""Stage 5, generate: sample notes from the adapted generator (vLLM on GPU, transformers on CPU).

``plan`` decides what to generate, ``run`` generates it resumably through a registered
backend, ``modes`` (annotate | tagged | template) decide how notes look to the generator and
read the generated notes into the synthetic corpus, ``stage`` is the pipeline stage.
"""

from site_agent.generate.backend import (
    GenerationBackend,
    PromptJob,
    choose_backend,
    register_backend,
)
from site_agent.generate.plan import GenerationPlan, plan_for_model, plan_generation
from site_agent.generate.run import generate_corpus
from site_agent.generate.settings import GenerationSettings

__all__ = [
    "GenerationBackend",
    "GenerationPlan",
    "GenerationSettings",
    "PromptJob",
    "choose_backend",
    "generate_corpus",
    "plan_for_model",
    "plan_generation",
    "register_backend",
]
