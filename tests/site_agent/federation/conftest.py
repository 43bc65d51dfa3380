"""A site work dir as the pipeline leaves it, cheaply: test split, signed bundle, annotator.

The annotator is a folder with a ``config.json`` only (roll call checks that it is there); the
rounds that run it are tested end to end in tests/coordinator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.template_sites import DemoSite, build_site, write_stage_record


@pytest.fixture
def site(tmp_path: Path) -> DemoSite:
    built = build_site(tmp_path / "sites", "site-a")
    annotator = built.site_dir / "03-annotator"
    (annotator / "model").mkdir(parents=True)
    (annotator / "model" / "config.json").write_text("{}", encoding="utf-8")
    write_stage_record(annotator, "annotator", {"model": "model"})
    return built
