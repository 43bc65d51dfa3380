"""The annotator called by model name: registry names resolved before the NER engine sees them."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import ModelUnavailableError
from site_agent.annotator import encoder
from site_agent.annotator.encoder import resolve_backbone


def test_backbone_asks_the_model_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def resolve_model(name: str) -> Path | str:
        if name == "org/other":
            return name
        if name != "minilm":
            raise ModelUnavailableError(f"unknown model {name}; fix: site-agent models fetch")
        return tmp_path / "minilm"

    monkeypatch.setattr(encoder, "resolve_model", resolve_model)
    assert resolve_backbone("minilm") == tmp_path / "minilm"
    assert resolve_backbone("org/other") == "org/other"
    with pytest.raises(ModelUnavailableError, match="models fetch"):
        resolve_backbone("not-registered")


def test_an_existing_folder_is_checked_not_looked_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def resolve_model(name: str) -> Path | str:
        raise AssertionError(f"{name} is a folder: the registry must not be asked")

    monkeypatch.setattr(encoder, "resolve_model", resolve_model)
    (tmp_path / "enc").mkdir()
    (tmp_path / "enc" / "config.json").write_text("{}", encoding="utf-8")
    assert resolve_backbone(tmp_path / "enc") == tmp_path / "enc"
    with pytest.raises(ModelUnavailableError, match=r"no config\.json"):
        resolve_backbone(tmp_path)


def test_the_stages_train_with_a_resume_folder_beside_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Both annotator stages go through ``train_encoder``: it keeps the per-epoch state in
    ``<model>.resume`` so a stopped stage resumes (the mechanism: tests/ner/test_resume.py)."""
    import ner.train
    from protocol import Corpus
    from protocol.annotator import AnnotatorSettings

    seen: dict[str, object] = {}

    class Done(Exception):
        pass

    def train_annotator(*args: object) -> None:
        seen["args"] = args
        raise Done

    monkeypatch.setattr(encoder, "resolve_model", lambda name, allow_fetch=False: tmp_path)
    monkeypatch.setattr(ner.train, "train_annotator", train_annotator)
    empty = Corpus(documents=())
    with pytest.raises(Done):
        encoder.train_encoder(empty, empty, "e5", AnnotatorSettings(), tmp_path / "model", None)
    args = seen["args"]
    assert isinstance(args, tuple) and args[4] == tmp_path / "model"
    assert args[6] == tmp_path / "model.resume"
