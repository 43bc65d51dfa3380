"""What a restricted output vocabulary keeps besides the training text: the generate stage's
prompts and fresh surrogate draws in the training notes' places."""

from __future__ import annotations

from protocol import Corpus, Document, Span
from site_agent.generate.modes import mode_for
from site_agent.generate.settings import GenerationSettings
from site_agent.generate.vocabulary_texts import SURROGATE_ROUNDS, vocabulary_texts
from site_agent.pseudonymise.settings import PseudonymiseSettings

NAME = "Ignacio Navarro"
TRAIN = Corpus(
    documents=(
        Document(
            id="t1", text=f"Médico: {NAME}. Alta.", spans=(Span(start=8, end=23, label="NOMBRE"),)
        ),
    )
)
VALIDATION = Corpus(documents=(Document(id="v1", text="Ingresa por dolor torácico agudo hoy."),))


def test_prompts_and_fresh_surrogates_are_kept() -> None:
    texts = vocabulary_texts(
        TRAIN, VALIDATION, mode_for("annotate"), PseudonymiseSettings(), GenerationSettings()
    )
    assert texts[0] == "Ingresa por dolor"  # the prompt: three opening words
    draws = texts[1:]
    assert len(draws) == SURROGATE_ROUNDS
    names = {d.removeprefix("Médico: ").removesuffix(". Alta.") for d in draws}
    assert NAME not in names and len(names) == SURROGATE_ROUNDS  # fresh, and each draw differs
