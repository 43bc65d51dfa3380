"""The one "apply where unset" rule: site.toml's values win, a plan fills in the rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def apply_where_unset(settings: M, values: Mapping[str, Any]) -> M:
    """``settings`` with ``values`` in the fields the site did not set (``model_fields_set``);
    a field the site set keeps its value, whatever the plan chose."""
    given = settings.model_fields_set
    update = {name: value for name, value in values.items() if name not in given}
    return settings.model_copy(update=update) if update else settings
