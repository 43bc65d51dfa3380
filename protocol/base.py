"""The base class every protocol type derives from."""

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = "1"


class ProtocolModel(BaseModel):
    """Frozen, strict-about-unknown-fields model; the base of every boundary type."""

    model_config = ConfigDict(frozen=True, extra="forbid")
