"""The coordinator's registry of sites: which keys a site signs with and joins with."""

from __future__ import annotations

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel


class SiteKeys(ProtocolModel):
    """One registered site: its Ed25519 export-signing key and its SuperNode auth key."""

    site_id: str = Field(min_length=1)
    signing_public_key_pem: str
    signing_key_id: str
    auth_public_key_openssh: str | None = None


class SiteRegistry(ProtocolModel):
    """``registry.json``: every site the coordinator accepts bundles and SuperNodes from."""

    schema_version: str = SCHEMA_VERSION
    sites: dict[str, SiteKeys] = Field(default_factory=dict)
