"""The site-private record of which original surface became which surrogate.

The privacy audit searches the synthetic corpus for both: an original shows the generator
saw real PII some other way; a surrogate shows it memorised its training text. The file is
written under the pseudonymise stage folder and never enters an export bundle.
"""

from __future__ import annotations

import json
from pathlib import Path

from protocol.base import ProtocolModel
from shared.atomic import atomic_open

SURROGATES_FILE = "surrogates.private.jsonl"


class SurrogateRecord(ProtocolModel):
    """One replacement made in one training document."""

    doc_id: str
    label: str
    original: str
    surrogate: str


def write_surrogates(records: list[SurrogateRecord], path: Path) -> None:
    with atomic_open(path, "w") as handle:
        for record in records:
            handle.write(json.dumps(record.model_dump(), ensure_ascii=False) + "\n")


def read_surrogates(path: Path) -> list[SurrogateRecord]:
    with path.open(encoding="utf-8") as handle:
        return [SurrogateRecord.model_validate_json(line) for line in handle if line.strip()]


def sensitive_surfaces(records: list[SurrogateRecord]) -> dict[str, tuple[str, ...]]:
    """``{"originals": ..., "surrogates": ...}``: unique surfaces the PII echo must search."""
    return {
        "originals": tuple(sorted({r.original for r in records})),
        "surrogates": tuple(sorted({r.surrogate for r in records if r.surrogate != r.original})),
    }
