"""How an exported file names a model: its registry name or Hugging Face id, and a hash.

A resolved model is a folder in the site's cache (``~/.cache/deid-synth/models/<name>``) or
anywhere else on its disks; that path says who ran the site and how its machine is laid out,
and means nothing to the coordinator. Exported files record :func:`model_identity` instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shared.provenance import config_digest, sha256_tree
from site_agent.models.cache import cache_root
from site_agent.models.record import read_record
from site_agent.models.registry import registered_models


@dataclass(frozen=True)
class ModelIdentity:
    """``name``: registry name, Hugging Face id, or a local folder's own name (no parents).

    ``sha256``: digest of the model files (None for a Hugging Face id not on this disk).
    """

    name: str
    sha256: str | None = None

    @property
    def label(self) -> str:
        """One string for tables and manifests: ``name`` or ``name@sha256:<first 16>``."""
        return self.name if self.sha256 is None else f"{self.name}@sha256:{self.sha256[:16]}"


def _installed_name(folder: Path) -> ModelIdentity | None:
    """The registry identity of a folder in the models cache that holds a registry record."""
    record = read_record(folder)
    if record is None:
        return None
    return ModelIdentity(record.name, config_digest(record.files))


def model_identity(
    name_or_path: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None
) -> ModelIdentity:
    """The identity of a model given by registry name, Hugging Face id or local folder."""
    text = os.fspath(name_or_path)
    local = Path(text).expanduser()
    if not local.exists():
        if text in registered_models():
            installed = _installed_name(cache_root(cache) / text)
            return installed or ModelIdentity(text)
        return ModelIdentity(text)  # a Hugging Face id, loaded by transformers by that name
    folder = local.resolve()
    installed = _installed_name(folder) if folder.is_dir() else None
    if installed is not None:
        return installed
    return ModelIdentity(f"local:{folder.name}", sha256_tree(folder))
