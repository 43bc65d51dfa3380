"""Where a site keeps what the federation asks for, read from the SuperNode's ``--node-config``.

Keys: ``site-id`` and ``site-dir`` (the pipeline's work dir) are required. By default the
site's files are where ``site-agent synthesize`` puts them: bundles in ``<site-dir>/outbox/``,
the held-out test split in ``<site-dir>/NN-split/test.jsonl`` and the gold-trained annotator in
``<site-dir>/NN-annotator/model``. ``export-dir``, ``test-split`` and ``annotator-dir``
override; ``signing-public-key`` names the key the site verifies its own bundle with before
sending (default: the one the export stage leaves in the outbox).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SiteFailure(Exception):
    """A failure the site reports to the coordinator as a code only (see ``SiteErrorCode``)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class SiteLayout:
    site_id: str
    site_dir: Path
    export_dir: Path
    test_split: Path
    annotator_dir: Path
    signing_public_key: Path | None = None

    @classmethod
    def from_node_config(cls, config: Mapping[str, Any]) -> SiteLayout:
        site_id, site_dir = config.get("site-id"), config.get("site-dir")
        if not site_id or not site_dir:
            raise SiteFailure("bad_request")
        root = Path(str(site_dir))
        return cls(
            site_id=str(site_id),
            site_dir=root,
            export_dir=Path(str(config.get("export-dir") or root / "outbox")),
            test_split=Path(
                str(config.get("test-split") or stage_file(root, "split", "test.jsonl"))
            ),
            annotator_dir=Path(
                str(config.get("annotator-dir") or stage_file(root, "annotator", "model"))
            ),
            signing_public_key=(
                Path(str(config["signing-public-key"]))
                if config.get("signing-public-key")
                else None
            ),
        )


def stage_file(site_dir: Path, stage: str, name: str) -> Path:
    """``<site-dir>/NN-<stage>/<name>`` of the latest-numbered stage folder (NN may change)."""
    found = sorted(site_dir.glob(f"[0-9][0-9]-{stage}/{name}"))
    return found[-1] if found else site_dir / f"00-{stage}" / name
