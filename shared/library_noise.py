"""Library chatter kept out of operators' logs, each entry named, so real warnings still show.

A log sent to a file is read by an operator, not by the libraries' developers. What is dropped
here is listed one entry a line with the reason; everything else a library logs or warns at
WARNING or above still reaches the log.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class LogNoise:
    """One library log message that tells an operator nothing they can act on."""

    logger: str
    starts_with: str
    why: str


LOG_NOISE = (
    LogNoise(
        "bitsandbytes.backends.cpu.ops",
        "Failed to load CPU gemm_4bit_forward from kernels-community",
        "an optional hub kernel package is absent; bitsandbytes falls back to its own CPU "
        "kernel, and the project never downloads kernels at run time",
    ),
    LogNoise(
        "bitsandbytes.backends.mps.ops",
        "Failed to load",
        "the same optional hub kernel, on Apple's MPS backend",
    ),
)
"""The library log messages dropped, by the logger that emits them and how they begin."""

DEPRECATION_NOISE_LIBRARIES = ("transformers", "peft", "torch")
"""Libraries whose FutureWarnings (notes to their developers, not operators) are dropped."""


class DropNoise(logging.Filter):
    """Drop the records of one logger whose message begins with one of ``prefixes``."""

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefixes)


def quiet_libraries() -> None:
    """Keep library chatter (weight-loading reports, hub progress bars, the entries of
    ``LOG_NOISE``) out of operators' logs, leaving every other warning in.

    Set before transformers is imported; an operator's own settings win. With stderr sent to
    a file, tqdm bars (carriage returns in a log) are switched off too.
    """
    for library in DEPRECATION_NOISE_LIBRARIES:
        warnings.filterwarnings("ignore", category=FutureWarning, module=rf"{library}(\.|$)")
    by_logger: dict[str, tuple[str, ...]] = {}
    for noise in LOG_NOISE:
        by_logger[noise.logger] = (*by_logger.get(noise.logger, ()), noise.starts_with)
    for name, prefixes in by_logger.items():
        logger = logging.getLogger(name)  # the same object the library's module gets later
        if not any(isinstance(f, DropNoise) for f in logger.filters):
            logger.addFilter(DropNoise(prefixes))
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not sys.stderr.isatty():
        os.environ.setdefault("TQDM_DISABLE", "1")
