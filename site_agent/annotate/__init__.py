"""The machine annotator: fine-tune an encoder NER model on gold notes, then label new notes.

``train_annotator`` and ``machine_annotate`` import torch, so they load on first use; the
settings, records and the quality gate are light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, AnnotatorResult, AnnotatorSettings
from site_agent.annotate.backbone import resolve_backbone
from site_agent.annotate.gate import check_annotator_quality

if TYPE_CHECKING:
    from site_agent.annotate.infer import machine_annotate
    from site_agent.annotate.train import train_annotator

_LAZY = {
    "train_annotator": "site_agent.annotate.train",
    "machine_annotate": "site_agent.annotate.infer",
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
    "check_annotator_quality",
    "machine_annotate",
    "resolve_backbone",
    "train_annotator",
]
