"""``coordinator.toml``: where the SuperLink is and the federation settings for a run.

    [superlink]
    address = "superlink.example.org:9093"
    root-certificates = "tls/ca.crt"     # TLS is required; `coordinator run --insecure`
                                          # (command line only) for a loopback test

    [federation]                          # the ServerApp run config (coordinator/settings.py)
    registry = "registry.json"
    base-model = "models/encoder"
    ...

Relative paths are taken from the folder of the file.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coordinator.settings import FederationSettings
from shared.config_files import read_toml, resolve_paths
from shared.errors import ConfigError
from shared.validation_messages import validation_lines

PATH_KEYS = ("registry", "base-model", "output-dir", "mapping")


class SuperLinkAddress(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    address: str = ""
    root_certificates: Path | None = Field(default=None, alias="root-certificates")


def load_coordinator_config(path: Path) -> tuple[SuperLinkAddress, FederationSettings]:
    raw = read_toml(path, what="coordinator config", fix="fix: a TOML file as in deploy/")
    unknown = set(raw) - {"superlink", "federation"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown section(s) {sorted(unknown)}; allowed: [superlink], [federation]"
        )
    link = dict(raw.get("superlink", {}))
    if "insecure" in link:
        raise ConfigError(
            f"{path}: [superlink] insecure is not read from a file: a connection without TLS is "
            "chosen on the command line only; fix: remove it, set root-certificates (or pass "
            "`coordinator run --insecure` for a test on this machine)"
        )
    link = resolve_paths(link, ["root-certificates"], path.parent)
    federation = resolve_paths(raw.get("federation", {}), PATH_KEYS, path.parent)
    try:
        address = SuperLinkAddress.model_validate(link)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid [superlink]", problems=validation_lines(exc)) from exc
    try:
        return address, FederationSettings.from_run_config(federation)
    except ConfigError as exc:  # name the file: the same settings also arrive through Flower
        raise ConfigError(f"{path}: [federation]: {exc.message}", problems=exc.problems) from exc
