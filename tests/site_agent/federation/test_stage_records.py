"""The federation finds the test split and annotator through the pipeline's stage.json."""

from __future__ import annotations

import json
from pathlib import Path

from site_agent.federation.layout import SiteLayout
from site_agent.federation.stage_records import stage_artifact


def record(folder: Path, stage: str, artifacts: dict[str, str], status: str = "completed") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    raw = {"stage": stage, "status": status, "artifacts": artifacts, "config_digest": "d"}
    (folder / "stage.json").write_text(json.dumps(raw), encoding="utf-8")


def test_artifacts_are_found_by_stage_name_not_folder_name(tmp_path: Path) -> None:
    record(tmp_path / "02-holdout", "split", {"test": "test.jsonl", "train": "train.jsonl"})
    record(tmp_path / "05-gold-ner", "annotator", {"model": "model"})
    record(tmp_path / "06-other", "adapt", {"model": "adapter"})
    assert stage_artifact(tmp_path, "split", "test") == tmp_path / "02-holdout" / "test.jsonl"
    assert stage_artifact(tmp_path, "annotator", "model") == tmp_path / "05-gold-ner" / "model"


def test_failed_unreadable_and_missing_records_give_nothing(tmp_path: Path) -> None:
    record(tmp_path / "01-split", "split", {"test": "test.jsonl"}, status="failed")
    (tmp_path / "03-annotator").mkdir()
    (tmp_path / "03-annotator" / "stage.json").write_text("{not json", encoding="utf-8")
    assert stage_artifact(tmp_path, "split", "test") is None
    assert stage_artifact(tmp_path, "annotator", "model") is None
    assert stage_artifact(tmp_path / "absent", "split", "test") is None


def test_the_layout_uses_records_unless_the_node_config_overrides(tmp_path: Path) -> None:
    record(tmp_path / "01-split", "split", {"test": "test.jsonl"})
    layout = SiteLayout.from_node_config({"site-id": "a", "site-dir": str(tmp_path)})
    assert layout.test_split == tmp_path / "01-split" / "test.jsonl"
    assert layout.annotator_dir is None and layout.export_dir == tmp_path / "outbox"
    custom = SiteLayout.from_node_config(
        {"site-id": "a", "site-dir": str(tmp_path), "test-split": "/data/test.jsonl"}
    )
    assert custom.test_split == Path("/data/test.jsonl")
