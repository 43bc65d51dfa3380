"""Read a JSON record this toolkit wrote itself (``stage.json``, ``run-plan.json``, ...) when
it is there and whole: a missing or unreadable record means "not done", never an error."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def read_record_file(model: type[M], path: Path) -> M | None:
    """``path`` parsed as ``model``; None when it is not a file or does not parse."""
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return None
