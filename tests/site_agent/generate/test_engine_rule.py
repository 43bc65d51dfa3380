"""The one engine rule: what ``[generation] backend`` runs on a machine, asked by the run plan
and by the generate stage alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.cpu_features import CpuFeatures, parse_cpuinfo
from shared.errors import ConfigError
from site_agent.adapt.output_vocabulary import VOCABULARY_FILE
from site_agent.config import build_site_config
from site_agent.generate import engine_rule, resumable
from site_agent.generate.engine_rule import Host, check_backend_name, engine_for
from site_agent.generate.plan import GenerationPlan
from site_agent.generate.settings import GenerationSettings
from site_agent.plan.estimate import generation_engine

AMX = parse_cpuinfo("model name: A\nflags: avx2 avx512f avx512_bf16 amx_tile amx_bf16")
AVX512_BF16 = parse_cpuinfo("model name: B\nflags: avx2 avx512f avx512_bf16")
AVX512_PLAIN = parse_cpuinfo("model name: C\nflags: avx2 avx512f")
CT2, VLLM, NONE = frozenset({"ctranslate2"}), frozenset({"vllm"}), frozenset[str]()


def _host(cpu: CpuFeatures, installed: frozenset[str], cuda: bool = False) -> Host:
    return Host(cuda=cuda, features=cpu, installed=installed)


@pytest.mark.parametrize(
    ("host", "requested", "restricted", "expected"),
    [
        (_host(AMX, CT2), "auto", False, "hf"),
        (_host(AVX512_BF16, CT2), "auto", False, "hf"),
        (_host(AVX512_PLAIN, CT2), "auto", False, "ctranslate2"),
        (_host(AVX512_PLAIN, NONE), "auto", False, "hf"),
        (_host(AVX512_PLAIN, CT2), "auto", True, "hf"),  # CTranslate2 cannot load it
        (_host(AVX512_PLAIN, CT2 | VLLM, cuda=True), "auto", False, "vllm"),
        (_host(AVX512_PLAIN, CT2 | VLLM, cuda=True), "auto", True, "vllm"),  # vLLM masks
        (_host(AVX512_PLAIN, CT2, cuda=True), "auto", False, "hf"),
        (_host(AVX512_PLAIN, VLLM), "auto", False, "hf"),  # vLLM wants CUDA
        (_host(AVX512_PLAIN, CT2, cuda=True), "hf", False, "hf"),  # a named backend wins
        (_host(AVX512_BF16, CT2), "ctranslate2", False, "ctranslate2"),
        (_host(AVX512_BF16, NONE), "openvino", False, "openvino"),
        (_host(AVX512_BF16, VLLM), "vllm", False, "vllm"),
        # named and restricted: taken as named (the backend refuses the adapter when it opens)
        (_host(AVX512_BF16, CT2), "ctranslate2", True, "ctranslate2"),
    ],
)
def test_the_rule_table(host: Host, requested: str, restricted: bool, expected: str) -> None:
    choice = engine_for(requested, host, restricted)
    assert choice.name == expected
    assert choice.why  # every choice says why


def test_vllm_named_but_missing_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"deid-synth\[gpu\]"):
        engine_for("vllm", _host(AMX, CT2, cuda=True))


def test_an_unknown_backend_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="'hf'"):
        engine_for("llamacpp", _host(AMX, CT2))
    with pytest.raises(ConfigError, match=r"\[generation\] backend = 'llamacpp'.*fix:"):
        check_backend_name("llamacpp")
    check_backend_name("auto")  # always allowed


HOSTS = [_host(AMX, CT2), _host(AVX512_PLAIN, CT2), _host(AVX512_PLAIN, NONE)]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("requested", ["auto", "hf", "ctranslate2", "openvino"])
@pytest.mark.parametrize("restricted", [False, True])
def test_the_plan_and_the_generate_stage_choose_alike(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    host: Host,
    requested: str,
    restricted: bool,
) -> None:
    """The plan prices the engine the generate stage then opens, on the same machine."""
    monkeypatch.setattr(engine_rule, "cpu_features", lambda: host.features)
    monkeypatch.setattr(engine_rule, "installed_engines", lambda: host.installed)
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    if restricted:
        (adapter / VOCABULARY_FILE).write_text("[]")
    opened: list[str] = []

    def factory(name: str) -> object:
        opened.append(name)
        return lambda *args: name

    monkeypatch.setattr(resumable, "backend_factory", factory)
    settings = GenerationSettings(backend=requested)
    plan = GenerationPlan(prompts=("a",), samples=(1,), max_new_tokens=8)
    resumable._open_backend("model", adapter, settings, plan, cuda_available=False)
    config = build_site_config({"site_id": "h", "device": "cpu", "corpus": {"path": "c.jsonl"},
                                "generation": {"backend": requested}})  # fmt: skip
    planned = generation_engine(config)  # for a full-vocabulary adapter
    expected = engine_for(requested, host, restricted).name
    assert opened == [expected]
    if not restricted:
        assert planned == expected
