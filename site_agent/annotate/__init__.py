"""Stage 6, annotate: the gold annotator labels the PII in the synthetic notes.

The NER engine is :mod:`site_agent.annotator`. ``train_annotator`` and ``machine_annotate``
are re-exported here only until the coordinator imports them from ``site_agent.annotator``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from site_agent.annotator import machine_annotate, train_annotator


def __getattr__(name: str) -> Any:
    if name in ("train_annotator", "machine_annotate"):
        import site_agent.annotator

        return getattr(site_agent.annotator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["machine_annotate", "train_annotator"]
