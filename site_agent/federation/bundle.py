"""The site's latest signed export bundle, found on disk and packed into Flower records."""

from __future__ import annotations

import json
from pathlib import Path

from flwr.app import ConfigRecord, RecordDict

from coordinator import wire
from coordinator.transport import safetensors_to_record
from protocol.export import ExportManifest
from site_agent.federation.layout import SiteFailure


def latest_bundle(export_dir: Path) -> Path:
    """The bundle folder whose manifest is newest (``export_dir`` itself may be one)."""
    candidates = [p.parent for p in export_dir.glob("*/" + wire.MANIFEST)]
    if (export_dir / wire.MANIFEST).exists():
        candidates.append(export_dir)
    if not candidates:
        raise SiteFailure("no_export_bundle")

    def created(folder: Path) -> str:
        return str(json.loads((folder / wire.MANIFEST).read_text(encoding="utf-8"))["created_at"])

    return max(candidates, key=created)


def read_manifest(bundle_dir: Path) -> ExportManifest:
    return ExportManifest.model_validate_json((bundle_dir / wire.MANIFEST).read_bytes())


def pack_bundle(bundle_dir: Path) -> RecordDict:
    """Manifest, signature and artifacts; encoder weights as ArrayRecords (streamed)."""
    manifest_bytes = (bundle_dir / wire.MANIFEST).read_bytes()
    manifest = ExportManifest.model_validate_json(manifest_bytes)
    files: dict[str, bytes | str] = {
        wire.MANIFEST: manifest_bytes,
        wire.SIGNATURE: (bundle_dir / wire.SIGNATURE).read_text(encoding="utf-8").strip(),
    }
    content = RecordDict()
    for entry in manifest.artifacts:
        path = bundle_dir / entry.name
        if not path.is_file():
            continue  # the coordinator names the missing artifact
        if entry.kind == "encoder_weights" and entry.name.endswith(".safetensors"):
            record, header = safetensors_to_record(path)
            content[wire.WEIGHTS_PREFIX + entry.name] = record
            files[wire.HEADER_PREFIX + entry.name] = header
        else:
            files[wire.FILE_PREFIX + entry.name] = path.read_bytes()
    content[wire.BUNDLE] = ConfigRecord(files)  # type: ignore[arg-type]
    return content
