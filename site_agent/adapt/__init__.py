"""Domain adaptation of the generator: LoRA on CPU, QLoRA (4-bit NF4) on CUDA."""

from site_agent.adapt.quantization import LoadPlan, choose_quantization, nf4_config_kwargs
from site_agent.adapt.result import AdaptResult
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.train import adapt_generator

__all__ = [
    "AdaptResult",
    "AdaptSettings",
    "LoadPlan",
    "adapt_generator",
    "choose_quantization",
    "nf4_config_kwargs",
]
