"""Issue 50: links planted in a work dir never make a run write or delete outside it.

Before: a symbolic link ``work/outbox`` made every run delete the hidden folders of the link's
target (a ``.git``, say), even a run that failed at once; a link ``work/.lock`` had the run
truncate the file it points at. Now the run refuses to start, naming the link, and nothing
outside the work dir changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.errors import UsageError
from site_agent.config import build_site_config
from site_agent.stages.pipeline import run_pipeline
from tests.security.test_site_faults import QUICK, site_config


def _outside(tmp_path: Path) -> Path:
    """A folder outside the work dir holding what must survive: a ``.git`` and a file."""
    target = tmp_path / "elsewhere"
    (target / ".git" / "objects").mkdir(parents=True)
    (target / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (target / "notes.txt").write_text("keep me\n", encoding="utf-8")
    return target


def _untouched(target: Path) -> bool:
    return (target / ".git" / "HEAD").read_text(encoding="utf-8") == "ref: refs/heads/main\n" and (
        target / "notes.txt"
    ).read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize("part", ["outbox", "01-quick"])
def test_a_linked_work_dir_folder_is_refused_and_its_target_kept(tmp_path: Path, part: str) -> None:
    config = build_site_config(site_config(tmp_path))
    target = _outside(tmp_path)
    config.work_dir.mkdir(parents=True)
    (config.work_dir / part).symlink_to(target, target_is_directory=True)
    with pytest.raises(UsageError, match=rf"{part} is a symbolic link .*fix: remove the link"):
        run_pipeline(config, QUICK)
    assert _untouched(target) and sorted(p.name for p in target.iterdir()) == [".git", "notes.txt"]


def test_a_linked_lock_file_is_never_followed_nor_its_target_truncated(tmp_path: Path) -> None:
    config = build_site_config(site_config(tmp_path))
    target = _outside(tmp_path) / "notes.txt"
    config.work_dir.mkdir(parents=True)
    (config.work_dir / ".lock").symlink_to(target)
    with pytest.raises(UsageError, match=r"\.lock is a symbolic link: refused, never followed"):
        run_pipeline(config, QUICK)
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_a_hard_linked_lock_file_is_refused(tmp_path: Path) -> None:
    config = build_site_config(site_config(tmp_path))
    target = _outside(tmp_path) / "notes.txt"
    config.work_dir.mkdir(parents=True)
    os.link(target, config.work_dir / ".lock")
    with pytest.raises(UsageError, match=r"\.lock is a hard link: refused"):
        run_pipeline(config, QUICK)
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_a_plain_work_dir_still_runs_and_a_linked_work_dir_itself_is_allowed(
    tmp_path: Path,
) -> None:
    real = tmp_path / "disk" / "w"
    real.mkdir(parents=True)
    data = site_config(tmp_path)
    (tmp_path / "w").symlink_to(real, target_is_directory=True)  # work_dir = tmp_path/w
    (runs,) = [run_pipeline(build_site_config(data), QUICK)]
    assert [r.name for r in runs] == ["quick"]
    assert (real / "01-quick" / "note.txt").read_text(encoding="utf-8") == "done"
