"""What this CPU computes natively, for choosing precision and engines and for naming the CPU
under every benchmark table: the ``flags`` line of ``/proc/cpuinfo`` (Linux) and torch's own
probes. No ML import at module top (``shared`` rule): torch is asked only when installed."""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
NAMED_FLAGS = {
    "AMX": ("amx_bf16", "amx_tile"),
    "AVX-512 BF16": ("avx512_bf16",),
    "AVX-512 VNNI": ("avx512_vnni",),
    "AVX-512": ("avx512f",),
    "AVX2": ("avx2",),
}
"""The instruction sets that decide CPU inference speed here, and their cpuinfo flags."""


@dataclass(frozen=True)
class CpuFeatures:
    """The CPU's model name and flags (empty where unreadable)."""

    model: str
    flags: frozenset[str]

    def has(self, name: str) -> bool:
        """Whether the CPU has every flag of ``name`` (a key of ``NAMED_FLAGS``)."""
        return all(flag in self.flags for flag in NAMED_FLAGS[name])

    @property
    def bf16_native(self) -> bool:
        return self.has("AMX") or self.has("AVX-512 BF16")

    def summary(self) -> str:
        """``"Intel Xeon ... (AMX yes, AVX-512 BF16 yes, ...)"``: the line under a table."""
        marks = ", ".join(f"{n} {'yes' if self.has(n) else 'no'}" for n in NAMED_FLAGS)
        return f"{self.model or 'unknown CPU'} ({marks})"


def parse_cpuinfo(text: str) -> CpuFeatures:
    """The first processor's model name and flags from ``/proc/cpuinfo`` text."""
    model, flags = "", frozenset[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = frozenset(value.split())
    return CpuFeatures(model, flags)


@functools.cache
def cpu_features(cpuinfo: Path = CPUINFO) -> CpuFeatures:
    try:
        return parse_cpuinfo(cpuinfo.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return CpuFeatures("", frozenset())


def _supported(names: tuple[str, ...], torch_probes: tuple[str, ...]) -> bool:
    """Any of ``names`` (:data:`NAMED_FLAGS`): torch's probes where torch is installed (what
    its kernels will use), else the cpuinfo flags."""
    if importlib.util.find_spec("torch") is None:
        features = cpu_features()
        return any(features.has(name) for name in names)
    import torch

    return any(bool(getattr(torch.cpu, probe, lambda: False)()) for probe in torch_probes)


def cpu_bf16_supported() -> bool:
    """bf16 is worth using on CPU only where the CPU has native bf16 instructions (AMX or
    AVX-512 BF16)."""
    return _supported(
        ("AMX", "AVX-512 BF16"), ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    )


def bf16_autocast(flag: bool | None, *, cuda: bool, cuda_bf16: bool, cpu_bf16: bool) -> bool:
    """Whether the encoder autocasts to bfloat16: the explicit ``flag``, else where the
    hardware makes it faster: on CUDA (``cuda``) where the device computes bf16
    (``cuda_bf16``), on a CPU where it has native bf16 instructions (``cpu_bf16``: AVX-512
    BF16 or AMX). The one rule: the encoder loop asks it with torch's probes, the run plan
    with what it reads without torch."""
    if flag is not None:
        return flag
    return cuda_bf16 if cuda else cpu_bf16


NVIDIA_DRIVER = (Path("/proc/driver/nvidia/version"), Path("/dev/nvidia0"))


def cuda_driver_present(paths: tuple[Path, ...] = NVIDIA_DRIVER) -> bool:
    """Whether an NVIDIA driver is loaded: the pre-flight's guess at CUDA without importing
    torch (``validate`` loads no ML framework); the stages themselves ask torch."""
    return any(path.exists() for path in paths)


def cuda_expected(device: str) -> bool:
    """Whether ``[site] device`` (auto | cpu | cuda) will run on CUDA, guessed without torch."""
    return device == "cuda" or (device == "auto" and cuda_driver_present())
