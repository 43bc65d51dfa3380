"""Where a site keeps what the federation asks for, read from the SuperNode's ``--node-config``.

Keys: ``site-id`` and ``site-dir`` (required); ``export-dir`` (default ``<site-dir>/exports``),
``test-split`` (default ``<site-dir>/data/test.jsonl``) and ``annotator-dir`` (default
``<site-dir>/annotator``, the site's gold-trained annotator) override the defaults.
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

    @classmethod
    def from_node_config(cls, config: Mapping[str, Any]) -> SiteLayout:
        site_id, site_dir = config.get("site-id"), config.get("site-dir")
        if not site_id or not site_dir:
            raise SiteFailure("bad_request")
        root = Path(str(site_dir))
        return cls(
            site_id=str(site_id),
            site_dir=root,
            export_dir=Path(str(config.get("export-dir") or root / "exports")),
            test_split=Path(str(config.get("test-split") or root / "data" / "test.jsonl")),
            annotator_dir=Path(str(config.get("annotator-dir") or root / "annotator")),
        )
