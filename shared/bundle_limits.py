"""Caps on what one export bundle may hold, checked before any of it is parsed.

The one verifier (``shared.bundle_verify``) applies them on both sides; the coordinator reads
them from its run config (``coordinator.settings``), so an operator may tighten or loosen
them. The defaults admit a real site's bundle (a corpus of tens of thousands of notes, a
base-size encoder) and refuse what would exhaust the coordinator's memory or stack.
"""

from __future__ import annotations

from pydantic import Field

from protocol.base import ProtocolModel
from protocol.export import MAX_ARTIFACTS
from shared.limits import JsonLimits

MIB = 1024 * 1024


class BundleLimits(ProtocolModel):
    """Sizes, counts and JSON shapes one bundle (or one reply) may have."""

    max_manifest_bytes: int = Field(1 * MIB, ge=1, description="manifest.json")
    max_json_bytes: int = Field(
        16 * MIB, ge=1, description="one JSON artifact (audit report, site report, configs)"
    )
    max_tokenizer_bytes: int = Field(
        64 * MIB,
        ge=1,
        description="an exported encoder's tokenizer.json (a 250k-piece multilingual vocabulary, "
        "the default e5-small's, is 17 MB: over max_json_bytes)",
    )
    max_json_depth: int = Field(32, ge=1, description="nesting of any JSON the site sent")
    max_json_members: int = Field(
        1_000_000, ge=1, description="array items and object members of one JSON document"
    )
    max_documents: int = Field(100_000, ge=1, description="documents in the synthetic corpus")
    max_labels: int = Field(
        256,
        ge=1,
        description="labels in the synthetic corpus (a site's evaluation policy refuses more "
        "in one instruction by default, so one bundle over it would deny every site)",
    )
    max_document_chars: int = Field(200_000, ge=1, description="characters of one document")
    max_corpus_bytes: int = Field(512 * MIB, ge=1, description="the synthetic corpus file")
    max_files: int = Field(MAX_ARTIFACTS, ge=1, description="files in one bundle")
    max_file_bytes: int = Field(2048 * MIB, ge=1, description="one file, weights included")
    max_bundle_bytes: int = Field(4096 * MIB, ge=1, description="all files of one bundle")
    max_tensors: int = Field(10_000, ge=1, description="tensors in one safetensors file")
    max_reply_bytes: int = Field(16 * MIB, ge=1, description="one reply payload (JSON)")

    def json_limits(self, max_bytes: int | None = None) -> JsonLimits:
        """The JSON caps, with ``max_bytes`` (default: ``max_json_bytes``)."""
        return JsonLimits(
            max_bytes=max_bytes or self.max_json_bytes,
            max_depth=self.max_json_depth,
            max_members=self.max_json_members,
        )

    def corpus_line(self) -> JsonLimits:
        """One JSONL document: its text plus spans and metadata (UTF-8: 4 bytes a character
        at most, JSON escapes 6 a character; spans and metadata besides)."""
        return JsonLimits(
            max_bytes=6 * self.max_document_chars + 1 * MIB,
            max_depth=min(self.max_json_depth, 16),
            max_members=self.max_json_members,
        )


DEFAULT_LIMITS = BundleLimits()
