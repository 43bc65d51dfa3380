"""Turn a registry name, local folder or Hugging Face id into something loadable."""

from __future__ import annotations

import os
import re
from pathlib import Path

from shared.errors import ModelUnavailableError
from shared.model_record import read_record
from site_agent.models.cache import model_dir
from site_agent.models.fetch import fetch_model
from site_agent.models.registry import registered_models

_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text in {".", ".."}


def resolve_model(
    name_or_path: str | os.PathLike[str],
    *,
    allow_fetch: bool = False,
    cache: str | os.PathLike[str] | None = None,
) -> Path | str:
    """A folder for ``from_pretrained``, or a Hugging Face id returned as it is.

    Order: an existing local path; a registry name (installed, or fetched when
    ``allow_fetch``); an ``org/name`` id. Anything else is a ModelUnavailableError whose
    message says how to get the model.
    """
    text = os.fspath(name_or_path)
    local = Path(text).expanduser()
    if local.exists():
        return local
    specs = registered_models()
    if text in specs:
        folder = model_dir(text, cache)
        if read_record(folder) is not None:
            return folder
        if allow_fetch:
            fetch_model(text, cache=cache)
            return folder
        raise ModelUnavailableError(
            f"model {text!r} is registered but not installed in {folder}; "
            f"fix: run `{specs[text].fetch_command}`"
        )
    if _looks_like_path(text) or isinstance(name_or_path, Path):
        raise ModelUnavailableError(
            f"{text}: no such model folder; fix: check the path, or use a registered name "
            f"({', '.join(specs)})"
        )
    if _HF_ID.match(text):
        return text
    raise ModelUnavailableError(
        f"unknown model {text!r}: not a local folder, not a registered name ({', '.join(specs)}), "
        "and not a Hugging Face id of the form 'org/name'; fix: run `site-agent models list` "
        "and `site-agent models fetch NAME`, or pass a model folder"
    )
