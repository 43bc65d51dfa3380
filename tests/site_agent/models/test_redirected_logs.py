"""Logs that read well when redirected: the GGUF conversion writes no carriage-return bars
into a file (transformers draws tqdm bars while it dequantises and loads weights)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.site_agent.models.tiny_gguf import write_tiny_llama_gguf

CONVERT = """
import sys
from pathlib import Path
from site_agent.models.converters import ConversionRequest
from site_agent.models.converters.gguf_to_safetensors import gguf_to_safetensors
gguf, out = Path(sys.argv[1]), Path(sys.argv[2])
request = ConversionRequest("tiny", (gguf.parent,), out, out.parent / "scratch",
                            {"gguf": gguf.name, "dtype": "float32"})
print(gguf_to_safetensors(request))
"""


def test_gguf_conversion_redirected_to_a_file_writes_no_carriage_return(
    tiny_llama: Path, tmp_path: Path
) -> None:
    source = tmp_path / "wheel"
    source.mkdir()
    gguf = write_tiny_llama_gguf(tiny_llama, source / "tiny.gguf")
    (tmp_path / "scratch").mkdir()
    log = tmp_path / "convert.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TQDM_", "HF_HUB_DISABLE"))}
    with log.open("wb") as out:  # a file, as `site-agent models fetch > log 2>&1` gives
        done = subprocess.run(
            [sys.executable, "-c", CONVERT, str(gguf), str(tmp_path / "model")],
            stdout=out, stderr=subprocess.STDOUT, env=env, check=False,
        )  # fmt: skip
    text = log.read_bytes()
    assert done.returncode == 0, text.decode(errors="replace")[-2000:]
    assert (tmp_path / "model" / "model.safetensors").is_file()
    assert b"\r" not in text, text.decode(errors="replace")[:500]
