"""``[audit.canaries]``: the canaries planted in the generator's adaptation text to test the
privacy audit (the site config holds them under ``[audit]``, beside the policy they test)."""

from __future__ import annotations

from pydantic import Field, model_validator

from protocol.base import ProtocolModel


class CanarySettings(ProtocolModel):
    """What is planted in the generator's adaptation text to test the audit.

    Two kinds, both site-private and never exported. *Identifier* canaries replace gold PII
    spans of the training copy with unique fake values; the audit checks none comes back.
    *Membership* canaries (``count``) are short notes, each an in-distribution opening, a
    surrogate name and a random secret of ``secret_words`` words; ``member_fraction`` of them
    are planted, the rest are kept out, so that the audit can test whether an adversary who
    only sees the synthetic corpus tells the planted ones from the others.
    """

    identifiers: int = Field(
        0,
        ge=0,
        description="fake identifiers planted in place of gold PII spans of the training copy "
        "(what `[audit] canaries = N` meant in earlier configs)",
    )
    count: int = Field(
        0,
        ge=0,
        description="membership canaries made (1000 recommended): member_fraction of them are "
        "planted as extra notes in the adaptation text, the rest never leave "
        "membership_canaries.private.json; the gold corpus and the annotator never see any",
    )
    member_fraction: float = Field(
        0.5, gt=0, lt=1, description="share of the membership canaries that are planted"
    )
    secret_words: int = Field(
        5, ge=2, le=12, description="words in each canary's random (high-perplexity) secret"
    )
    prefix_words: int = Field(
        20,
        ge=0,
        description="words of a random pseudonymised training note opening each canary "
        "(its in-distribution context)",
    )
    min_document_frequency: int = Field(
        3,
        ge=1,
        description="secret words are words of 4-14 letters found outside gold spans in at "
        "least this many training notes",
    )
    seed: int | None = Field(
        None,
        description="private seed of the membership canaries; unset: a random one, recorded "
        "in membership_canaries.private.json (keep both on the site)",
    )

    @model_validator(mode="after")
    def _both_groups(self) -> CanarySettings:
        if self.count == 1:
            raise ValueError(
                "count = 1 leaves no group to compare: membership needs planted and kept-out "
                "canaries; fix: set count = 0 (off) or >= 2 (1000 recommended)"
            )
        return self
