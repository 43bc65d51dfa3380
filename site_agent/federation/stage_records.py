"""Where the pipeline left an artifact, read from the ``stage.json`` records of the work dir.

Every stage folder ``<work-dir>/<NN-name>/`` holds a ``stage.json`` naming the stage and its
artifacts (paths relative to the folder). The federation reads those records instead of
guessing folder names, so it follows the pipeline whatever the stages are numbered or called
on disk. Only the three fields used here are read; the record's full type belongs to the
pipeline.
"""

from __future__ import annotations

import json
from pathlib import Path

STAGE_RECORD = "stage.json"


def _read(record_path: Path) -> dict[str, object] | None:
    try:
        raw = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def stage_artifact(work_dir: Path, stage: str, artifact: str) -> Path | None:
    """The path of ``artifact`` of the completed ``stage`` in ``work_dir``; None if none ran.

    When several folders hold a completed record of ``stage``, the last in folder order wins.
    """
    found = None
    for record_path in sorted(work_dir.glob(f"*/{STAGE_RECORD}")):
        record = _read(record_path)
        if record is None or record.get("stage") != stage or record.get("status") != "completed":
            continue
        artifacts = record.get("artifacts")
        stored = artifacts.get(artifact) if isinstance(artifacts, dict) else None
        if isinstance(stored, str):
            found = record_path.parent / stored  # an absolute stored path stays as it is
    return found
