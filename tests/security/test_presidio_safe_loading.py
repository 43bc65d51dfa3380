"""Issue 50: ``site-agent evaluate --presidio DIR`` loads the folder as every model is loaded.

Before: Presidio's recognizer handed the folder to transformers' ``pipeline`` without
``shared/safe_models.py``: code the folder names in ``auto_map`` ran once the transformers
prompt was answered "y", and without an answer the command ended in a traceback. Now the folder
is refused with a named error and an exit code; nothing is asked and nothing runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from shared.corpus_io import write_corpus
from shared.errors import ModelUnavailableError
from tests.ner.conftest import synthetic_corpus
from tests.tiny_models import tiny_encoder

pytestmark = pytest.mark.skipif(
    find_spec("presidio_analyzer") is None or find_spec("presidio_anonymizer") is None,
    reason='Presidio is an optional extra, not installed here: pip install -e ".[presidio]"',
)
REPO = Path(__file__).resolve().parents[2]
EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [d.text for d in synthetic_corpus(8, 1, "tr").documents]
    return tiny_encoder(tmp_path_factory.mktemp("base") / "tiny", texts, hidden=32)


def _with_code(folder: Path, into: Path) -> tuple[Path, Path]:
    """A copy of ``folder`` whose config names ``evil.py`` in ``auto_map``; and the file that
    code would write."""
    import shutil

    model = Path(shutil.copytree(folder, into / "model"))
    marker = into / "code-ran.txt"
    (model / "evil.py").write_text(EVIL.format(marker=str(marker)), encoding="utf-8")
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    config["id2label"] = {"0": "O", "1": "B-PER", "2": "I-PER"}
    config["auto_map"] = {"AutoModelForTokenClassification": "evil.Model"}
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return model, marker


def _evaluate(tmp_path: Path, model: Path) -> subprocess.CompletedProcess[str]:
    gold = tmp_path / "gold.jsonl"
    write_corpus(synthetic_corpus(2, 5, "te"), gold)
    script = Path(sys.executable).with_name("site-agent")
    command = [str(script)] if script.exists() else ["site-agent"]
    return subprocess.run(
        [*command, "evaluate", "--gold", str(gold), "--presidio", str(model)],
        input="y\ny\n",  # whatever a prompt would ask, the answer is yes
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_folder_with_code_is_refused_and_nothing_runs(folder: Path, tmp_path: Path) -> None:
    model, marker = _with_code(folder, tmp_path)
    result = _evaluate(tmp_path, model)
    err = " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == ModelUnavailableError.exit_code, err
    assert "refused to load" in err and "fix:" in err, err
    assert not marker.exists()


def test_a_deeply_nested_config_is_refused_cleanly(folder: Path, tmp_path: Path) -> None:
    import shutil

    model = Path(shutil.copytree(folder, tmp_path / "model"))
    (model / "config.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = _evaluate(tmp_path, model)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == ModelUnavailableError.exit_code
    assert "config.json does not parse within the caps" in " ".join(result.stderr.split())
