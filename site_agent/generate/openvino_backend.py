"""The OpenVINO GenAI backend: the generator exported once to OpenVINO IR, sampled in C++.

The base model is exported with optimum-intel (``OVModelForCausalLM``, a stateful IR that
``openvino_genai.LLMPipeline`` reads) and its tokenizer with openvino_tokenizers, into a cache
folder named by what went in (base weights, adapter hash when merged, library versions) with a
``provenance.json``. A LoRA adapter is applied at run time (``openvino_genai.Adapter``); one
that adds tokens (tagged and template modes) is merged into the base first
(``merge.merge_adapter``) and the merged model exported. An adapter with a restricted output
vocabulary is refused: GenAI can mask neither its output layer nor its sampler to a set.

Optional: ``pip install 'deid-synth[openvino]'``. optimum-intel 2.2 pins transformers <= 5.5
and huggingface-hub < 1.22, older than this project's; install it in its own environment
(``--system-site-packages``) if the versions clash.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from shared.atomic import atomic_directory, atomic_write_text
from shared.provenance import sha256_tree
from shared.safe_models import from_pretrained
from site_agent.generate.backend import PromptJob, per_job, refuse_restricted, sample_rows
from site_agent.generate.merge import adds_tokens, merge_adapter
from site_agent.generate.settings import GenerationSettings
from site_agent.models.cache import cache_root

PROVENANCE = "provenance.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


def _key(model: Path, merged_adapter: Path | None) -> dict[str, Any]:
    weights = sorted(model.glob("*.safetensors"))
    return {
        "base_model": model.name,
        "base_weights": [[p.name, p.stat().st_size] for p in weights],
        "base_config_sha256": hashlib.sha256((model / "config.json").read_bytes()).hexdigest(),
        "merged_adapter_sha256": sha256_tree(merged_adapter) if merged_adapter else None,
        "openvino": version("openvino"),
        "optimum-intel": version("optimum-intel"),
    }


def export_model(source: Path, out: Path) -> None:
    """``source`` (a transformers folder) as OpenVINO IR with its tokenizer and detokenizer."""
    import openvino
    from openvino_tokenizers import convert_tokenizer
    from optimum.intel import OVModelForCausalLM
    from transformers import AutoTokenizer

    exported = from_pretrained(OVModelForCausalLM, source, export=True, compile=False)
    exported.save_pretrained(out)
    tokenizer, detokenizer = convert_tokenizer(
        from_pretrained(AutoTokenizer, source), with_detokenizer=True, skip_special_tokens=True
    )
    openvino.save_model(tokenizer, out / "openvino_tokenizer.xml")
    openvino.save_model(detokenizer, out / "openvino_detokenizer.xml")


def exported_model(model: Path, adapter: Path | None, cache: Path | None = None) -> Path:
    """The OpenVINO folder of ``model`` (merged with ``adapter`` when it adds tokens)."""
    merged = adapter if adds_tokens(adapter) else None
    key = _key(model, merged)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    target = (cache or cache_root().parent / "openvino") / f"{model.name}-{digest}"
    if (target / PROVENANCE).is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="ov-merge-") as tmp, atomic_directory(target) as out:
        source = model if merged is None else merge_adapter(model, merged, Path(tmp))
        export_model(source, out)
        record = {**key, "exported_at": datetime.now(UTC).isoformat()}
        atomic_write_text(out / PROVENANCE, json.dumps(record, indent=2))
    return target


def generation_config(settings: GenerationSettings, max_new_tokens: int, seed: int) -> Any:
    """Nucleus sampling as in the seed study (top-k off unless asked for)."""
    import openvino_genai

    config = openvino_genai.GenerationConfig()
    config.do_sample = True
    config.top_p = settings.top_p
    config.temperature = settings.temperature
    if settings.top_k > 0:
        config.top_k = settings.top_k
    config.min_new_tokens = settings.min_new_tokens
    config.max_new_tokens = max_new_tokens
    config.rng_seed = seed
    return config


class OpenVINOBackend:
    name = "openvino"

    def __init__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        import openvino_genai

        refuse_restricted(self.name, adapter)
        folder = exported_model(Path(model), adapter)
        properties: dict[str, Any] = {}
        if settings.cpu_threads and settings.cpu_threads > 1:
            # 1 thread without an adapter crashed OpenVINO 2026.4.1 here (SIGFPE)
            properties["INFERENCE_NUM_THREADS"] = settings.cpu_threads
        self.adapter = None
        if adapter is not None and not adds_tokens(adapter):  # LoRA at run time
            self.adapter = openvino_genai.Adapter(str(Path(adapter) / ADAPTER_WEIGHTS))
            properties["adapters"] = openvino_genai.AdapterConfig(self.adapter)
        self.pipeline = openvino_genai.LLMPipeline(str(folder), "CPU", **properties)
        self.settings = settings
        self.max_new_tokens = max_new_tokens
        self.tokens_generated = 0

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        config = generation_config(self.settings, self.max_new_tokens, jobs[0].seed)
        results = self.pipeline.generate(sample_rows(jobs), config)
        self.tokens_generated += int(results.perf_metrics.get_num_generated_tokens())
        return per_job(jobs, [str(t) for t in results.texts])

    def close(self) -> None:
        del self.pipeline
