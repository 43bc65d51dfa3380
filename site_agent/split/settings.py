"""``[corpus]`` and ``[split]``: where the gold corpus is and how it is split."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from protocol.base import ProtocolModel


class CorpusSettings(ProtocolModel):
    """``[corpus]``: where the site's gold corpus lives; optional files pin existing splits."""

    path: Path = Field(description="the gold corpus (a file or folder; relative to site.toml)")
    format: str | None = Field(
        None, description="jsonl | brat | conll | datasets; unset: guessed from the path"
    )
    validation_path: Path | None = Field(
        None, description="an existing validation split, kept as it is"
    )
    test_path: Path | None = Field(None, description="an existing test split, kept as it is")


class SplitSettings(ProtocolModel):
    """``[split]``: how the gold corpus is split when it does not come split already."""

    validation_fraction: float = Field(
        0.05,
        gt=0.0,
        lt=1.0,
        description="share of the corpus for validation (prompts come from it)",
    )
    test_fraction: float = Field(
        0.2, gt=0.0, lt=1.0, description="share held out for the final evaluation only"
    )
    seed: int = Field(13, description="seed of the split")
    group_by_source: bool = Field(
        True, description="keep all documents of one `source` in one split"
    )

    @model_validator(mode="after")
    def _room_for_training(self) -> SplitSettings:
        if self.validation_fraction + self.test_fraction >= 0.9:
            raise ValueError(
                f"validation_fraction + test_fraction = "
                f"{self.validation_fraction + self.test_fraction:.2f} leaves under 10% for "
                "training; fix: lower one of them"
            )
        return self
