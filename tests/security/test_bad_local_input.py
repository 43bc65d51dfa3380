"""Issue 30, bad local input and faults, through the installed console scripts.

Each row is an input that ended in a traceback, passed when it should not, or did harm:
it must now end with the row's exit code and a stderr that names the file (and line and
field where there is one) and the fix. ``PYTHONPATH`` points ``site-agent`` at this checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OK = {"id": "a", "text": "Ana vino", "spans": [{"start": 0, "end": 3, "label": "PER"}]}


def jsonl(*rows: str) -> Callable[[Path], str]:
    def write(w: Path) -> str:
        (w / "in.jsonl").write_text("".join(row + "\n" for row in rows), encoding="utf-8")
        return str(w / "in.jsonl")

    return write


def nested(depth: int) -> str:
    return json.dumps(OK)[:-1] + ', "meta": {"x": ' + "[" * depth + "]" * depth + "}}"


def span(start: str, end: str) -> str:
    offsets = f'"start": {start}, "end": {end}'
    return '{"id": "d", "text": "Ana vino", "spans": [{' + offsets + ', "label": "PER"}]}'


def hf_empty_state(w: Path) -> str:
    from shared.corpus_io.hf_datasets import write_saved_dataset
    from shared.corpus_io.jsonl import read_jsonl

    jsonl(json.dumps(OK))(w)
    write_saved_dataset(read_jsonl(w / "in.jsonl"), w / "hf")
    (w / "hf" / "state.json").write_text("", encoding="utf-8")
    return str(w / "hf")


@dataclass(frozen=True)
class Row:
    name: str
    argv: Callable[[Path], list[str]]
    code: int
    stderr: tuple[str, ...]


def validate(make: Callable[[Path], str], *options: str) -> Callable[[Path], list[str]]:
    return lambda w: ["validate", *options, make(w)]


ROWS = [
    Row(
        "deeply nested JSONL line",
        validate(jsonl(json.dumps(OK), nested(100_000))),
        65,
        ("in.jsonl:2", "nested", "over the cap of depth 32", "fix:"),
    ),
    Row(
        "lone surrogate in text",
        validate(jsonl('{"id": "s", "text": "Ana \\ud800 vino", "spans": []}')),
        65,
        ("in.jsonl:1", "text", "unpaired surrogate U+D800", "fix:"),
    ),
    Row(
        "string span offset",
        validate(jsonl(span('"0"', "3"))),
        65,
        ("in.jsonl:1", "start", "must be an integer", "fix:"),
    ),
    Row(
        "boolean span offsets",
        validate(jsonl(span("false", "true"))),
        65,
        ("in.jsonl:1", "start", "end", "boolean", "fix:"),
    ),
    Row(
        "HF datasets folder with an empty state.json",
        validate(hf_empty_state),
        65,
        ("state.json:1", "not valid JSON", "fix:"),
    ),
    Row(
        "--format jsonl /dev/zero",
        validate(lambda w: "/dev/zero", "--format", "jsonl"),
        65,
        ("/dev/zero", "not a regular file", "fix:"),
    ),
    Row(
        "init --site-id ../../evil",
        lambda w: ["init", "--site-id", "../../evil", "--keys-dir", f"{w}/k", "--config", f"{w}/s"],
        2,
        ("--site-id '../../evil'", "is not a site id", "fix:"),
    ),
    Row(
        "auth-key over an existing key",
        lambda w: ["auth-key", "--out", str(existing_auth_key(w))],
        2,
        ("already exist", "--force", "fix:"),
    ),
]  # fmt: skip


def existing_auth_key(w: Path) -> Path:
    key = w / "supernode.key"
    key.write_text("the key the coordinator registered\n", encoding="utf-8")
    return key


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_bad_input_ends_with_a_named_error(tmp_path: Path, row: Row) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "250"}
    result = subprocess.run(
        [shutil.which("site-agent") or "site-agent", *row.argv(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == row.code, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    for needle in row.stderr:
        assert needle in result.stderr, (needle, result.stderr[-2000:])
    assert not (tmp_path.parent / "evil.ed25519.key.pem").exists()  # nothing written outside
    if row.name.startswith("auth-key"):
        assert "registered" in (tmp_path / "supernode.key").read_text()  # the key is kept
