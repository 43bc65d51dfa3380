"""What no filler may write: the identifier strings of the notes the generator saw."""

from __future__ import annotations

from pathlib import Path

from protocol import Corpus
from site_agent.pseudonymise.records import read_surrogates, sensitive_surfaces


def forbidden_surfaces(seen: Corpus, surrogates: Path) -> tuple[str, ...]:
    """Identifier strings no filler may write: the gold strings the pseudonymiser replaced,
    their surrogates, and every span of the notes the generator saw (``seen``: the training
    text and the validation notes its prompts come from, as the audit's PII echo reads them;
    ``surrogates``: the pseudonymiser's private records)."""
    known = sensitive_surfaces(read_surrogates(surrogates))
    spans = {d.surface(s) for d in seen.documents for s in d.spans}
    return tuple(sorted(spans.union(known["originals"], known["surrogates"])))
