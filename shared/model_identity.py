"""How a trained model's records name the model it started from: a name and a hash, no path.

A model folder lives anywhere on a machine's disks; that path says who ran it and how the
machine is laid out, and means nothing elsewhere. A folder the site's model registry installed
names itself by its ``registry.json`` record; any other folder is ``local:<folder name>``
with a digest of its files; a Hugging Face id (no such folder) is its own name.
``site_agent.models.identity`` adds registry names that are not yet resolved to a folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shared.model_record import read_record
from shared.provenance import config_digest, sha256_tree


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


def installed_identity(folder: Path) -> ModelIdentity | None:
    """The registry identity of a model folder that holds a registry record (else None)."""
    record = read_record(folder)
    if record is None:
        return None
    return ModelIdentity(record.name, config_digest(record.files))


def loadable_identity(folder_or_id: str | os.PathLike[str]) -> ModelIdentity:
    """The identity of what ``from_pretrained`` loads: an existing folder, or a Hugging Face id."""
    text = os.fspath(folder_or_id)
    local = Path(text).expanduser()
    if not local.exists():
        return ModelIdentity(text)  # a Hugging Face id, loaded by transformers by that name
    folder = local.resolve()
    installed = installed_identity(folder) if folder.is_dir() else None
    if installed is not None:
        return installed
    return ModelIdentity(f"local:{folder.name}", sha256_tree(folder))
