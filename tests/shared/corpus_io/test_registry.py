"""The format registry knows every built-in format, however the first one was imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import loaded_after

REPO = Path(__file__).resolve().parents[3]


def test_direct_import_of_one_format_does_not_hide_the_others() -> None:
    code = (
        "import shared.corpus_io.conll\n"
        "from shared.corpus_io import formats\n"
        "print(' '.join(sorted(formats())))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [
        "brat",
        "conll",
        "datasets",
        "jsonl",
    ]


def test_importing_every_format_imports_no_ml_library() -> None:
    code = "from shared.corpus_io import formats\nformats()"
    assert loaded_after(code, ("datasets", "torch", "transformers")) == []
