"""The coordinator's registry of sites: which keys a site signs with and joins with."""

from __future__ import annotations

from pydantic import Field, model_validator

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.export import SITE_ID_PATTERN


class SiteKeys(ProtocolModel):
    """One registered site: its Ed25519 export-signing key and its SuperNode auth key."""

    site_id: str = Field(pattern=SITE_ID_PATTERN)
    signing_public_key_pem: str
    signing_key_id: str
    auth_public_key_openssh: str | None = None


class SiteRegistry(ProtocolModel):
    """``registry.json``: every site the coordinator accepts bundles and SuperNodes from."""

    schema_version: str = SCHEMA_VERSION
    sites: dict[str, SiteKeys] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _keys_name_their_site(self) -> SiteRegistry:
        for name, keys in self.sites.items():
            if name != keys.site_id:
                raise ValueError(f"registry entry {name!r} holds the keys of {keys.site_id!r}")
        return self
