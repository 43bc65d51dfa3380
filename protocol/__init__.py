"""Types that cross a boundary: between stages, between a site and the coordinator, on disk.

Every model is a frozen pydantic v2 model with ``extra="forbid"`` so that a typo in a file or a
message from a newer peer fails loudly instead of being silently ignored.
"""

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.corpus import Corpus, Document, LabelMapping, Provenance, Span

__all__ = [
    "SCHEMA_VERSION",
    "Corpus",
    "Document",
    "LabelMapping",
    "ProtocolModel",
    "Provenance",
    "Span",
]
