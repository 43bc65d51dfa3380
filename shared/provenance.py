"""Hashes and digests that stamp provenance into every artifact."""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from protocol import Provenance

DISTRIBUTION = "deid-synth"


def tool_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_tree(path: str | os.PathLike[str]) -> str:
    """Digest of a file, or of every file below a folder (relative names and contents)."""
    root = Path(path)
    if root.is_file():
        return sha256_file(root)
    digest = hashlib.sha256()
    for item in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(item.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(sha256_file(item).encode())
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_digest(value: Any) -> str:
    """Stable SHA-256 of a config (a pydantic model or JSON-like value)."""
    return sha256_bytes(canonical_json(value).encode())


def make_provenance(**fields: Any) -> Provenance:
    return Provenance(tool_version=tool_version(), **fields)
