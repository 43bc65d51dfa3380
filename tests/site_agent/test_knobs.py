"""The knobs stages share follow the audit's reference: every real note the generator saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import write_corpus
from site_agent.config import build_site_config
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.stages import knobs


def _corpus(prefix: str, name: str) -> Corpus:
    text = f"Paciente {name} ingresa."
    span = Span(start=9, end=9 + len(name), label="PER")
    return Corpus(documents=(Document(id=f"{prefix}1", text=text, spans=(span,)),))


def test_the_filler_index_covers_the_validation_notes_the_prompts_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, validation = tmp_path / "train.jsonl", tmp_path / "validation.jsonl"
    write_corpus(_corpus("t", "Ana Ruiz"), train)
    write_corpus(_corpus("v", "Eva Soto"), validation)
    seen: list[tuple[str, ...]] = []

    def build(real: Any, filters: Any, tokenizer: str) -> str:
        seen.append(tuple(d.id for d in real))
        return "index"

    monkeypatch.setattr(IdentifyingIndex, "build", staticmethod(build))
    monkeypatch.setattr(knobs, "tokenizer_reference", lambda config: "tok")
    config = build_site_config({"site_id": "x", "corpus": {"path": "c.jsonl"}})
    assert knobs.identifying_index(config, train, validation)() == "index"
    assert seen == [("t1", "v1")]
