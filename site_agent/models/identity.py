"""How an exported file names a model given by registry name, Hugging Face id or folder.

A folder or a Hugging Face id is named as everywhere (:mod:`shared.model_identity`); a
registry name that is not a folder is named by its installed record in the site's cache, or
by itself when it is not installed yet.
"""

from __future__ import annotations

import os
from pathlib import Path

from shared.model_identity import ModelIdentity, installed_identity, loadable_identity
from site_agent.models.cache import cache_root
from site_agent.models.registry import registered_models


def model_identity(
    name_or_path: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None
) -> ModelIdentity:
    """The identity of a model given by registry name, Hugging Face id or local folder."""
    text = os.fspath(name_or_path)
    if not Path(text).expanduser().exists() and text in registered_models():
        installed = installed_identity(cache_root(cache) / text)
        return installed or ModelIdentity(text)
    return loadable_identity(text)


def model_licence(
    name_or_path: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None
) -> str:
    """The licence the registry recorded for a model (folder or registry name); "" if none."""
    from shared.model_record import read_record

    text = os.fspath(name_or_path)
    folder = Path(text).expanduser()
    if not folder.exists() and text in registered_models():
        folder = cache_root(cache) / text
    if not folder.is_dir():
        return registered_models()[text].licence if text in registered_models() else ""
    record = read_record(folder)
    return record.licence if record else ""
