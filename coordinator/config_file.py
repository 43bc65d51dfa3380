"""``coordinator.toml``: where the SuperLink is and the federation settings for a run.

    [superlink]
    address = "superlink.example.org:9093"
    root-certificates = "tls/ca.crt"     # or: insecure = true (loopback tests only)

    [federation]                          # the ServerApp run config (coordinator/settings.py)
    registry = "registry.json"
    base-model = "models/encoder"
    ...

Relative paths are taken from the folder of the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from coordinator.settings import FederationSettings
from shared.errors import ConfigError
from shared.text_files import read_text

PATH_KEYS = ("registry", "base-model", "output-dir", "mapping")


class SuperLinkAddress(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    address: str = ""
    root_certificates: Path | None = Field(default=None, alias="root-certificates")
    insecure: bool = False


def load_coordinator_config(path: Path) -> tuple[SuperLinkAddress, FederationSettings]:
    text = read_text(path, what="coordinator config", error=ConfigError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read ({exc}); fix: a TOML file as in deploy/") from exc
    unknown = set(raw) - {"superlink", "federation"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown section(s) {sorted(unknown)}; allowed: [superlink], [federation]"
        )
    base = path.parent
    link = dict(raw.get("superlink", {}))
    if link.get("root-certificates"):
        link["root-certificates"] = str(base / link["root-certificates"])
    federation = dict(raw.get("federation", {}))
    for key in PATH_KEYS:
        if federation.get(key):
            federation[key] = str(base / federation[key])
    try:
        address = SuperLinkAddress.model_validate(link)
    except ValueError as exc:
        raise ConfigError(f"{path}: [superlink] is invalid: {exc}") from exc
    return address, FederationSettings.from_run_config(federation)
