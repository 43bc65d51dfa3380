"""Issue 50: files a site reads from its own disk that an operator or an intruder may have
written (a nested ``vocabulary.json``), and a disk that fills up during ``site-agent audit``.

Each test failed before the fix: the nested file raised an uncaught RecursionError; the full
disk said "a file: No space left on device" with a permissions fix, and left the audited
corpus behind without its ``audit.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.errors import ConfigError
from site_agent.adapt.output_vocabulary import VOCABULARY_FILE, read_vocabulary

DEEP = 200_000  # far past Python's recursion limit
REPO = Path(__file__).resolve().parents[2]


def test_a_deeply_nested_vocabulary_is_refused_cleanly(tmp_path: Path) -> None:
    body = '{"full_size": 10, "sha256": "x", "ids": ' + "[" * DEEP + "]" * DEEP + "}"
    (tmp_path / VOCABULARY_FILE).write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"vocabulary.json: not a valid output vocabulary .*"
                       r"over the cap of depth 2.*fix: re-run the adapt stage"):  # fmt: skip
        read_vocabulary(tmp_path)


def test_a_written_vocabulary_still_reads_back(tmp_path: Path) -> None:
    from site_agent.adapt.output_vocabulary import OutputVocabulary, write_vocabulary

    vocabulary = OutputVocabulary(tuple(range(0, 50_000, 3)), 262_144)
    write_vocabulary(tmp_path, vocabulary)
    assert read_vocabulary(tmp_path) == vocabulary
    assert json.loads((tmp_path / VOCABULARY_FILE).read_text())["full_size"] == 262_144


# --- a full disk during site-agent audit ----------------------------------------------------

FULL_DISK_AT = """
import errno, os, sys

real_fdopen = os.fdopen
FULL_AT = "." + sys.argv[1] + "."  # the temporary file of this name finds the disk full


class FullDisk:
    def __init__(self, handle):
        self.handle = handle

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as write(2) says it: no path

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


def fdopen(fd, *args, **kwargs):
    handle = real_fdopen(fd, *args, **kwargs)
    name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    return FullDisk(handle) if name.startswith(FULL_AT) else handle


os.fdopen = fdopen
from site_agent.cli import main

sys.argv = ["site-agent", *sys.argv[2:]]
main()
"""

NOTE = {"id": "n1", "text": "Paciente con fiebre y tos.", "spans": []}


def _audit_with_a_full_disk(tmp_path: Path, full_at: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "real.jsonl").write_text(json.dumps(NOTE) + "\n", encoding="utf-8")
    other = {**NOTE, "id": "s1", "text": "Paciente sin fiebre."}
    (tmp_path / "syn.jsonl").write_text(json.dumps(other) + "\n", encoding="utf-8")
    args = ["audit", "--real", "real.jsonl", "--synthetic", "syn.jsonl", "--out", "out"]
    return subprocess.run(
        [sys.executable, "-c", FULL_DISK_AT, full_at, *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("full_at", ["audit.json", "synthetic.audited.jsonl"])
def test_a_full_disk_names_the_file_asks_for_space_and_leaves_no_half_audit(
    tmp_path: Path, full_at: str
) -> None:
    result = _audit_with_a_full_disk(tmp_path, full_at)
    err = " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 74, err
    assert f"out/{full_at}: No space left on device" in err, err
    assert "fix: free space on the disk that holds" in err and "permissions" not in err, err
    left = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert left == [], left  # no audited corpus without its audit.json, no temporary file
