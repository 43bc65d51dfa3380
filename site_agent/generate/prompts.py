"""Prompt text for a mode: the openings of validation notes with their identifiers replaced by
surrogates (issue 15: a note that starts with a name still prompts), then rendered as the
mode renders its adaptation text (tags around the surrogates, or placeholders instead)."""

from __future__ import annotations

from protocol import Corpus
from site_agent.generate.modes import GenerationMode
from site_agent.generate.plan import PromptRenderer
from site_agent.pseudonymise.corpus import pseudonymise_corpus
from site_agent.pseudonymise.settings import PseudonymiseSettings


def prompt_renderer(mode: GenerationMode, surrogates: PseudonymiseSettings) -> PromptRenderer:
    """Openings -> prompts: surrogates from the site's providers (its locale), then ``mode``."""
    settings = surrogates.model_copy(update={"mode": "surrogate"})

    def render(openings: Corpus) -> list[str]:
        replaced = pseudonymise_corpus(openings, settings).corpus
        return [mode.render(doc) for doc in replaced.documents]

    return render
