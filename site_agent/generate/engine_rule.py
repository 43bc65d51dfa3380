"""Which engine samples the generator on this machine: the one rule the run plan (pricing, the
recipe's vocabulary choice) and the generate stage (the backend it opens) both ask.

``[generation] backend = "auto"``: vLLM on CUDA where it is installed, transformers on CUDA
otherwise; on a CPU, the rule measured with ``benchmarks/generator.py`` (top-p 0.95, idle; the
runs, their CPUs and dates are in ``benchmarks/README.md`` and the rates the plan prices with
in ``site_agent/calibration/measurements.toml``): where bf16 is native (AMX or AVX-512 BF16),
transformers in bf16 beat CTranslate2 int8 for both embedded generators, OpenVINO GenAI too
except on SmolLM2 with the full vocabulary; without native bf16, CTranslate2 int8 beat
transformers' float32 kernels with the full output vocabulary, while transformers within the
corpus vocabulary beat both. So: transformers where bf16 is native, CTranslate2 where it is
not and is installed.

An adapter with a restricted output vocabulary is sampled by transformers where ``auto`` chose
an engine that cannot load it (each backend says so when it registers,
``site_agent/generate/backend.py``); the recipe restricts the vocabulary where that is
measured faster (the recipe's ``choose_vocabulary``). OpenVINO GenAI is never
picked by ``auto``: it is an optional install in an environment of its own, and it beat
transformers only on SmolLM2 with the full vocabulary; it stays selectable for that case. A
backend named in ``site.toml`` is taken as named (a restricted adapter it cannot load is
refused when it opens).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from shared.cpu_features import CpuFeatures, cpu_features
from shared.errors import ConfigError
from site_agent.generate.backend import BACKENDS, samples_restricted

OPTIONAL_ENGINES = ("ctranslate2", "vllm", "openvino_genai")
"""The optional engines whose installation the rule asks about (import names)."""


@dataclass(frozen=True)
class Host:
    """What this machine offers a generation engine: CUDA, the CPU's native formats, and which
    optional engines are importable."""

    cuda: bool
    features: CpuFeatures
    installed: frozenset[str]


@dataclass(frozen=True)
class EngineChoice:
    """The engine (a registered backend name) and why it was chosen."""

    name: str
    why: str


def installed_engines() -> frozenset[str]:
    """The optional engines importable here (imports none of them)."""
    return frozenset(n for n in OPTIONAL_ENGINES if importlib.util.find_spec(n) is not None)


def this_host(cuda: bool) -> Host:
    """This machine, with ``cuda`` as the caller knows it (the plan guesses it from the
    driver without importing torch; the generate stage asks torch)."""
    return Host(cuda=cuda, features=cpu_features(), installed=installed_engines())


def engine_for(requested: str, host: Host, restricted: bool = False) -> EngineChoice:
    """The engine ``[generation] backend = requested`` runs on ``host`` for an adapter with a
    ``restricted`` output vocabulary or not. ConfigError for a backend that is not registered
    or vLLM named where it is not installed."""
    if requested != "auto":
        check_request(requested, host.installed)
        return EngineChoice(requested, f"[generation] backend = {requested!r} set")
    choice = _automatic(host)
    if restricted and not samples_restricted(choice.name):
        return EngineChoice(
            "hf",
            f"the adapter restricts the output vocabulary, which {choice.name} cannot load: "
            "transformers samples within it",
        )
    return choice


def _automatic(host: Host) -> EngineChoice:
    if host.cuda:
        if "vllm" in host.installed:
            return EngineChoice("vllm", "CUDA and vLLM installed")
        return EngineChoice("hf", "CUDA without vLLM: transformers")
    if host.features.bf16_native:
        return EngineChoice(
            "hf", "native bf16 (AMX or AVX-512 BF16): transformers in bf16 measured fastest"
        )
    if "ctranslate2" in host.installed:
        return EngineChoice(
            "ctranslate2", "no native bf16: CTranslate2 int8 measured faster than transformers"
        )
    return EngineChoice("hf", "no native bf16 and CTranslate2 not installed: transformers")


def check_request(requested: str, installed: frozenset[str]) -> None:
    """ConfigError when the backend ``requested`` by name cannot run where ``installed``
    engines are importable."""
    if requested not in BACKENDS:
        raise ConfigError(
            f"unknown generation backend {requested!r}; allowed: 'auto', {BACKENDS.names()}"
        )
    if requested == "vllm" and "vllm" not in installed:
        raise ConfigError(
            "generation backend 'vllm' requested but vllm is not installed; fix: install "
            "the GPU extra (`pip install 'deid-synth[gpu]'`) or use backend 'auto' or 'hf'"
        )


def check_backend_name(requested: str) -> None:
    """ConfigError naming ``[generation] backend`` when ``requested`` cannot be chosen here."""
    if requested == "auto":
        return
    try:
        check_request(requested, installed_engines())
    except ConfigError as exc:
        raise ConfigError(
            f"site config [generation] backend = {requested!r}: {exc.message}"
            + ("" if "fix:" in exc.message else "; fix: use one of them")
        ) from None
