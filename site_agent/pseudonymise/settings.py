"""``[pseudonymise]``: how gold PII is replaced before the generator sees the training text."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from protocol.base import ProtocolModel


class PseudonymiseSettings(ProtocolModel):
    """Replace gold PII in the training text before the generator sees it (seed paper 004)."""

    mode: Literal["none", "surrogate", "filter"] = Field(
        "surrogate",
        description="surrogate: realistic same-label replacements; filter: drop sentences "
        "with PII; none: pass through",
    )
    locale: str = Field(
        "es_ES",
        description="Faker locale of the surrogates (names, places, companies); also the date "
        "order of ambiguous dates where the corpus's own dates do not tell: en_US reads 7/22 "
        "as month/day. Month names are kept in the note's language. `site-agent init "
        "--language/--locale` writes it",
    )
    seed: int = Field(13, description="seed of the surrogates and of canary planting")
    filter_labels: tuple[str, ...] = Field(
        (), description="with mode = filter: only these labels drop a sentence (empty: all)"
    )
