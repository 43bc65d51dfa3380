"""Stage 3, annotator: fine-tune an encoder NER model on gold notes, then label new notes.

The NER engine lives here (``train``, ``features``, ``backbone``, ``decoding``, ``loop``,
``scoring``, ``validate``, ``gate``, ``infer``); ``recipe`` and ``sampling`` adapt training to
the corpus's PHI density, ``diagnosis`` explains a failed gate. The ``annotate`` stage and the
coordinator reuse ``machine_annotate`` and ``train_annotator``. Both import torch, so they
load on first use; the settings, records, recipe and the quality gate are light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, AnnotatorResult, AnnotatorSettings
from site_agent.annotator.backbone import resolve_backbone
from site_agent.annotator.gate import check_annotator_quality
from site_agent.annotator.settings import GoldAnnotatorSettings

if TYPE_CHECKING:
    from site_agent.annotator.infer import machine_annotate
    from site_agent.annotator.train import train_annotator

_LAZY = {
    "train_annotator": "site_agent.annotator.train",
    "machine_annotate": "site_agent.annotator.infer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AnnotatorMetrics",
    "AnnotatorRecord",
    "AnnotatorResult",
    "AnnotatorSettings",
    "GoldAnnotatorSettings",
    "check_annotator_quality",
    "machine_annotate",
    "resolve_backbone",
    "train_annotator",
]
