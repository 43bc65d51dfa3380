"""``backend = "auto"`` on a CPU: the engine the CPU's features and the benchmark pick."""

from __future__ import annotations

import pytest

from shared.cpu_features import parse_cpuinfo
from site_agent.generate import backend
from site_agent.generate.backend import choose_backend, planned_engine
from site_agent.generate.engine_rule import cpu_engine

AMX = parse_cpuinfo("model name: A\nflags: avx2 avx512f avx512_bf16 amx_tile amx_bf16")
AVX512_BF16 = parse_cpuinfo("model name: B\nflags: avx2 avx512f avx512_bf16")
AVX512_PLAIN = parse_cpuinfo("model name: C\nflags: avx2 avx512f")
CT2 = frozenset({"ctranslate2"})


@pytest.mark.parametrize(
    ("cpu", "installed", "restricted", "expected"),
    [
        (AMX, CT2, False, "hf"),
        (AVX512_BF16, CT2, False, "hf"),
        (AVX512_PLAIN, CT2, False, "ctranslate2"),
        (AVX512_PLAIN, frozenset(), False, "hf"),
        (AVX512_PLAIN, CT2, True, "hf"),  # CTranslate2 refuses a restricted adapter
    ],
)
def test_cpu_rule(cpu: object, installed: frozenset[str], restricted: bool, expected: str) -> None:
    engine, why = cpu_engine(cpu, installed, restricted)  # type: ignore[arg-type]
    assert engine == expected and why


@pytest.mark.parametrize(
    ("cuda", "vllm", "cpu_choice", "expected"),
    [(False, False, "ctranslate2", "ctranslate2"), (True, True, "ctranslate2", "vllm"),
     (True, False, "ctranslate2", "hf"), (False, True, "hf", "hf")],
)  # fmt: skip
def test_auto_takes_the_cpu_rule_on_a_cpu_only(
    cuda: bool, vllm: bool, cpu_choice: str, expected: str
) -> None:
    assert choose_backend(cuda, vllm, "auto", cpu_choice) == expected
    assert choose_backend(cuda, vllm, "hf", cpu_choice) == "hf"  # an explicit name wins


@pytest.mark.parametrize(
    ("cpu", "installed", "requested", "expected"),
    [
        (AVX512_PLAIN, CT2, "auto", "ctranslate2"),
        (AVX512_BF16, CT2, "auto", "hf"),
        (AVX512_PLAIN, frozenset(), "auto", "hf"),
        (AVX512_BF16, CT2, "openvino", "openvino"),
        (AVX512_BF16, CT2, "no-such-engine", "no-such-engine"),  # the pre-flight names it
    ],
)
def test_planned_engine_is_what_auto_would_run_for_a_full_vocabulary(
    monkeypatch: pytest.MonkeyPatch,
    cpu: object,
    installed: frozenset[str],
    requested: str,
    expected: str,
) -> None:
    import shared.cpu_features

    monkeypatch.setattr(shared.cpu_features, "cpu_features", lambda: cpu)
    monkeypatch.setattr(backend, "installed_engines", lambda: installed)
    assert planned_engine(requested, "cpu") == expected
