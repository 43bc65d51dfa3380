"""What a restricted output vocabulary must let the generator write besides its training text:
the generate stage's prompts (validation openings with surrogates, rendered as the mode
renders notes) and ``SURROGATE_ROUNDS`` fresh surrogate draws over the training notes (the
Faker pools are unbounded: a seeded sample of them in the site's shapes and locale)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import Corpus

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode
    from site_agent.generate.settings import GenerationSettings
    from site_agent.pseudonymise.settings import PseudonymiseSettings

SURROGATE_ROUNDS = 4
"""Fresh surrogate draws over the training notes whose tokens a restricted vocabulary keeps."""


def vocabulary_texts(
    train: Corpus,
    validation: Corpus,
    mode: GenerationMode,
    surrogates: PseudonymiseSettings,
    generation: GenerationSettings,
) -> list[str]:
    """Besides the training text, what a restricted output vocabulary must let the generator
    write: the prompts, and surrogates drawn afresh (seeds after the site's) in the notes'
    places, rendered as the mode renders them."""
    from site_agent.generate.plan import build_prompts
    from site_agent.generate.prompts import prompt_renderer
    from site_agent.pseudonymise.corpus import pseudonymise_corpus

    texts = build_prompts(validation, generation.prompt_words, prompt_renderer(mode, surrogates))
    for draw in range(1, SURROGATE_ROUNDS + 1):
        fresh = surrogates.model_copy(update={"mode": "surrogate", "seed": surrogates.seed + draw})
        texts += [mode.render(d) for d in pseudonymise_corpus(train, fresh).corpus.documents]
    return texts
