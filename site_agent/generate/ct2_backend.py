"""The CTranslate2 backend: the adapted generator converted once, then sampled in C++.

The LoRA adapter is merged into the base weights (``merge.merge_adapter``); the merged model
is converted with CTranslate2's transformers converter into a cache folder named by what went
in (base model, adapter hash, quantization, CTranslate2 version) with a ``provenance.json``,
and later runs load that folder directly. Prompts are tokenized with the model's own tokenizer.
CTranslate2 seeds its sampling threads once, when the generator is built, so a run is
reproducible from ``[generation] seed`` as a whole (the same batches in the same order give the
same notes); unlike the transformers backend it cannot reseed each batch, so a resumed run
continues with other random draws (the notes it keeps are unaffected).

Sampling: CTranslate2 applies top-k before top-p. With ``top_k = 0`` it samples the full
vocabulary's nucleus (exact, but it sorts every row); with ``top_k > 0`` the nucleus of the
``k`` best tokens (``benchmarks/generator.py`` measures the mass that loses).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared.atomic import atomic_directory, atomic_write_text
from shared.provenance import sha256_tree
from shared.safe_models import from_pretrained
from site_agent.generate.backend import PromptJob, per_job, refuse_restricted, sample_rows
from site_agent.generate.merge import merge_adapter, tokenizer_source
from site_agent.generate.settings import GenerationSettings
from site_agent.models.cache import cache_root

PROVENANCE = "provenance.json"


def compute_type(cuda: bool, requested: str = "auto") -> str:
    """int8 weights with float32 compute on CPU (measured fastest here); int8/float16 on CUDA."""
    if requested != "auto":
        return requested
    return "int8_float16" if cuda else "int8"


def _model_key(model: Path, adapter: Path | None, quantization: str) -> dict[str, Any]:
    import ctranslate2

    weights = sorted(model.glob("*.safetensors"))
    return {
        "base_model": model.name,
        "base_weights": [[p.name, p.stat().st_size] for p in weights],
        "base_config_sha256": hashlib.sha256((model / "config.json").read_bytes()).hexdigest(),
        "adapter_sha256": sha256_tree(adapter) if adapter is not None else None,
        "quantization": quantization,
        "ctranslate2": ctranslate2.__version__,
    }


def converted_model(
    model: Path, adapter: Path | None, quantization: str = "int8", cache: Path | None = None
) -> Path:
    """The CTranslate2 folder of ``model`` + ``adapter``, converted on first use and cached."""
    from ctranslate2.converters import TransformersConverter

    key = _model_key(model, adapter, quantization)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    target = (cache or cache_root().parent / "ctranslate2") / f"{model.name}-{digest}"
    if (target / PROVENANCE).is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="ct2-merge-") as tmp, atomic_directory(target) as out:
        merged = model if adapter is None else merge_adapter(model, adapter, Path(tmp))
        TransformersConverter(str(merged), load_as_float16=False).convert(
            str(out), quantization=quantization, force=True
        )
        record = {**key, "converted_at": datetime.now(UTC).isoformat()}
        atomic_write_text(out / PROVENANCE, json.dumps(record, indent=2))
    return target


class CT2Backend:
    name = "ctranslate2"

    def __init__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        import ctranslate2
        from transformers import AutoTokenizer

        refuse_restricted(self.name, adapter)
        cuda = ctranslate2.get_cuda_device_count() > 0
        folder = converted_model(Path(model), adapter)
        threads = settings.cpu_threads or 0
        ctranslate2.set_random_seed(settings.seed)  # read once, when the workers start
        self.generator = ctranslate2.Generator(
            str(folder),
            device="cuda" if cuda else "cpu",
            compute_type=compute_type(cuda, settings.ct2_compute_type),
            inter_threads=1,
            intra_threads=threads,
        )
        self.tokenizer = from_pretrained(AutoTokenizer, tokenizer_source(model, adapter))
        self.settings = settings
        self.max_new_tokens = max_new_tokens
        self.tokens_generated = 0

    def sampling_kwargs(self) -> dict[str, Any]:
        return {
            "sampling_topk": self.settings.top_k,
            "sampling_topp": self.settings.top_p,
            "sampling_temperature": self.settings.temperature,
            "max_length": self.max_new_tokens,
            "min_length": self.settings.min_new_tokens,
            "include_prompt_in_result": False,
        }

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        rows = sample_rows(jobs)
        tokens = [self.tokenizer.convert_ids_to_tokens(self.tokenizer.encode(r)) for r in rows]
        results = self.generator.generate_batch(
            tokens, max_batch_size=len(tokens), **self.sampling_kwargs()
        )
        ids = [result.sequences_ids[0] for result in results]
        self.tokens_generated += sum(len(i) for i in ids)
        return per_job(jobs, [str(self.tokenizer.decode(i, skip_special_tokens=True)) for i in ids])

    def close(self) -> None:
        del self.generator
