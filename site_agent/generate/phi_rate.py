"""Does the generator write PHI? Its mentions per 1,000 words against the real notes', early.

On a corpus where most notes hold no PHI, an adapted generator may write none at all (issue
29: zero placeholders in the first 24 notes after 96 steps), and a synthetic corpus without
PHI teaches the annotator nothing. After the first ``phi_check_after`` notes the generate
stage counts what the generator wrote itself (placeholders, or opening tags; the prompt's own
markers do not count) and stops, with a diagnosis and the fix, when that rate is under
``min_phi_rate`` of the real training notes' span rate, instead of generating for hours.

The ``annotate`` mode writes plain text that the annotator labels in a later stage; it is not
checked here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from protocol import Corpus, Document
from protocol.base import ProtocolModel
from shared.errors import QualityGateError
from shared.ner_tokens import split_words

if TYPE_CHECKING:
    from site_agent.generate.modes.base import GenerationMode


class PhiRate(ProtocolModel):
    """PHI mentions in some notes, per note and per 1,000 words."""

    notes: int
    mentions: int
    words: int
    notes_with_phi: int

    @property
    def per_note(self) -> float:
        return self.mentions / self.notes if self.notes else 0.0

    @property
    def per_1000_words(self) -> float:
        return 1000 * self.mentions / self.words if self.words else 0.0


class PhiRateCheck(ProtocolModel):
    """The early check of what the generator writes, as ``stage.json`` records it."""

    mode: str
    real: PhiRate
    written: PhiRate
    ratio: float = Field(description="written over real mentions per 1,000 words")
    min_ratio: float
    passed: bool


def real_rate(corpus: Corpus) -> PhiRate:
    """The training notes' gold spans per note and per 1,000 words."""
    docs = corpus.documents
    return PhiRate(
        notes=len(docs),
        mentions=sum(len(d.spans) for d in docs),
        words=sum(len(split_words(d.text)) for d in docs),
        notes_with_phi=sum(bool(d.spans) for d in docs),
    )


def written_rate(
    docs: Sequence[Document], prompts: Sequence[str], marker: re.Pattern[str]
) -> PhiRate:
    """Markers the generator wrote after each note's prompt (``meta.prompt_index``)."""
    mentions = words = with_phi = 0
    for doc in docs:
        index = int((doc.meta or {}).get("prompt_index", 0))
        prompt = prompts[index] if index < len(prompts) else ""
        written = doc.text[len(prompt) :] if doc.text.startswith(prompt) else doc.text
        found = len(marker.findall(written))
        mentions, with_phi = mentions + found, with_phi + (found > 0)
        words += len(split_words(marker.sub(" PHI ", written)))
    return PhiRate(notes=len(docs), mentions=mentions, words=words, notes_with_phi=with_phi)


def check_phi_rate(
    mode: GenerationMode,
    real: PhiRate,
    docs: Sequence[Document],
    prompts: Sequence[str],
    min_ratio: float,
) -> PhiRateCheck | None:
    """The check of ``docs`` (the first generated notes), counting ``mode``'s own PHI marker;
    None for a mode without one. Raises :class:`QualityGateError` (exit 3) when the rate is
    under ``min_ratio`` of the real notes'."""
    marker = mode.phi_marker
    if marker is None or real.mentions == 0:
        return None
    written = written_rate(docs, prompts, marker)
    ratio = written.per_1000_words / real.per_1000_words if real.per_1000_words else 0.0
    check = PhiRateCheck(
        mode=mode.name, real=real, written=written, ratio=round(ratio, 4), min_ratio=min_ratio,
        passed=ratio >= min_ratio,
    )  # fmt: skip
    if not check.passed:
        summary: dict[str, object] = {"phi_rate": check.model_dump(mode="json")}
        raise PhiRateError(diagnosis(check, mode.phi_noun), summary=summary)
    return check


class PhiRateError(QualityGateError):
    """The generator writes far less PHI than the real notes hold (exit 3)."""

    def __init__(self, message: str, *, summary: dict[str, object]) -> None:
        super().__init__(message)
        self.summary = summary


def diagnosis(check: PhiRateCheck, what: str) -> str:
    """What was found (``what``: the mode's noun for its markers), why it matters and what to
    change."""
    real, written = check.real, check.written
    found = (
        f"generate: in the first {written.notes} notes the generator wrote {written.mentions} "
        f"{what} ({written.per_1000_words:.1f} per 1,000 words, {written.notes_with_phi} notes "
        f"with any) against {real.per_1000_words:.1f} per 1,000 words in the real training "
        f"notes ({real.notes_with_phi} of {real.notes} notes with PHI): {check.ratio:.0%} of "
        f"the real rate, under the {check.min_ratio:.0%} that [generation] min_phi_rate asks"
    )
    why = (
        "a synthetic corpus this poor in PHI would teach the annotator to tag nothing, after "
        "hours of generation"
    )
    fix = (
        "fix: let the generator see more PHI (raise [adapt] phi_window_repeat, e.g. 3, or "
        "remove [adapt] max_steps/epochs so the recipe's steps apply), prompt more notes with "
        "a PHI-bearing opening ([generation] phi_prompt_share, e.g. 0.5), or set "
        "[generation] min_phi_rate = 0 to generate anyway"
    )
    return f"{found}; {why}; {fix}"
