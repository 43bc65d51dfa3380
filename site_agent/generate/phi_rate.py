"""Does the generator write PHI as the real notes do? Early, what it wrote against the real rate.

On a corpus where most notes hold no PHI, an adapted generator may write none at all (issue
29: zero placeholders in the first 24 notes after 96 steps), and a synthetic corpus without
PHI teaches the annotator nothing; one that writes PHI at tens of times the real rate teaches
it the opposite. After the first ``phi_check_after`` notes the generate stage reads what the
generator wrote itself (the prompt's own markers do not count) and sorts it four ways
(issue 46):

- well-formed markers of the scheme's labels (``{{Date:1}}``, ``<Date>``): the rate compared;
- well-formed markers naming a label outside the scheme (``{{Datum:1}}``), per label;
- malformed marker-like strings (``{{Date}}``, a stray ``}}``, a tag closing another label);
- identifiers in plain text (a numeric date, a long number, an e-mail address), per kind.

It stops, with a diagnosis naming what it saw and the fix, when the scheme's markers per
1,000 words fall outside ``[min_phi_rate, max_phi_rate]`` times the real training notes'
span rate, instead of generating for hours. The counts go to ``stage.json`` either way.

The ``annotate`` mode writes plain text that the annotator labels in a later stage; it is not
checked here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import Field

from protocol import Corpus, Document
from protocol.base import ProtocolModel
from shared.errors import QualityGateError
from shared.ner_tokens import split_words
from site_agent.generate.label_marks import label_of
from site_agent.generate.placeholders import PLACEHOLDER, PLACEHOLDER_LIKE
from site_agent.generate.plain_identifiers import identifier_kinds
from site_agent.generate.tags import TAG, read_tags

if TYPE_CHECKING:
    from site_agent.generate.modes.base import GenerationMode


@dataclass
class Written:
    """What one note's generated text holds, sorted as the check sorts it."""

    mentions: int = 0
    words: int = 0
    malformed: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    plain: Counter[str] = field(default_factory=Counter)


def placeholders_written(text: str, labels: frozenset[str]) -> Written:
    """Placeholders of ``labels``, of other labels, malformed ones and plain identifiers."""
    found = Written()
    for match in PLACEHOLDER.finditer(text):
        label = label_of(match.group(1))
        if label in labels:
            found.mentions += 1
        else:
            found.unknown[label] += 1
    rest = PLACEHOLDER.sub(" PHI ", text)
    found.malformed = len(PLACEHOLDER_LIKE.findall(rest))
    rest = PLACEHOLDER_LIKE.sub(" ", rest)
    found.plain = identifier_kinds(rest)
    found.words = len(split_words(rest))
    return found


def tags_written(text: str, labels: frozenset[str]) -> Written:
    """Tag pairs of ``labels``, tags of other labels, malformed tags and plain identifiers
    (outside the tagged surfaces)."""
    reading = read_tags(text, labels)
    found = Written(mentions=reading.well_formed, unknown=Counter(reading.unknown))
    found.malformed = reading.malformed
    spans = sorted(reading.spans, key=lambda s: s.start, reverse=True)
    plain = reading.text
    for span in spans:
        plain = f"{plain[: span.start]} PHI {plain[span.end :]}"
    found.plain = identifier_kinds(TAG.sub(" ", plain))
    found.words = len(split_words(reading.text))  # the surfaces are words of the note
    return found


PhiReader = Callable[[str, frozenset[str]], Written]
"""How a mode reads the PHI the generator wrote in one note's text (its registry entry,
``GenerationMode.phi_reader``, says which: ``placeholders_written``, ``tags_written``)."""


class PhiRate(ProtocolModel):
    """PHI mentions in some notes, per note and per 1,000 words; for generated notes, also
    what was written that is not a mention of the scheme."""

    notes: int
    mentions: int
    words: int
    notes_with_phi: int
    unknown_labels: dict[str, int] = Field(
        default_factory=dict, description="well-formed markers of labels outside the scheme"
    )
    malformed: int = Field(0, description="marker-like strings that are not well-formed")
    plain_identifiers: dict[str, int] = Field(
        default_factory=dict, description="identifier-like plain text, per kind"
    )

    @property
    def per_note(self) -> float:
        return self.mentions / self.notes if self.notes else 0.0

    @property
    def per_1000_words(self) -> float:
        return 1000 * self.mentions / self.words if self.words else 0.0

    @property
    def unknown(self) -> int:
        return sum(self.unknown_labels.values())

    @property
    def plain(self) -> int:
        return sum(self.plain_identifiers.values())


class PhiRateCheck(ProtocolModel):
    """The early check of what the generator writes, as ``stage.json`` records it."""

    mode: str
    real: PhiRate
    written: PhiRate
    ratio: float = Field(description="written over real mentions per 1,000 words")
    min_ratio: float
    max_ratio: float | None = None
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
    docs: Sequence[Document],
    prompts: Sequence[str],
    read: Callable[[str, frozenset[str]], Written],
    labels: frozenset[str],
) -> PhiRate:
    """What the generator wrote after each note's prompt (``meta.prompt_index``)."""
    total = Written()
    with_phi = 0
    for doc in docs:
        index = int((doc.meta or {}).get("prompt_index", 0))
        prompt = prompts[index] if index < len(prompts) else ""
        text = doc.text[len(prompt) :] if doc.text.startswith(prompt) else doc.text
        found = read(text, labels)
        total.mentions += found.mentions
        total.words += found.words
        total.malformed += found.malformed
        total.unknown.update(found.unknown)
        total.plain.update(found.plain)
        with_phi += found.mentions > 0
    return PhiRate(
        notes=len(docs),
        mentions=total.mentions,
        words=total.words,
        notes_with_phi=with_phi,
        unknown_labels=dict(total.unknown.most_common()),
        malformed=total.malformed,
        plain_identifiers=dict(total.plain.most_common()),
    )


def check_phi_rate(
    mode: GenerationMode,
    real: PhiRate,
    docs: Sequence[Document],
    prompts: Sequence[str],
    labels: frozenset[str],
    min_ratio: float,
    max_ratio: float | None = None,
) -> PhiRateCheck | None:
    """The check of ``docs`` (the first generated notes) against the scheme's ``labels``, read
    as ``mode`` reads them; None for a mode the generator writes no markers in. Raises
    :class:`PhiRateError` (exit 3) when the rate is under ``min_ratio`` or over ``max_ratio``
    of the real notes'."""
    read = mode.phi_reader
    if read is None or real.mentions == 0:
        return None
    written = written_rate(docs, prompts, read, labels)
    ratio = written.per_1000_words / real.per_1000_words if real.per_1000_words else 0.0
    within = ratio >= min_ratio and (max_ratio is None or ratio <= max_ratio)
    check = PhiRateCheck(
        mode=mode.name, real=real, written=written, ratio=round(ratio, 4), min_ratio=min_ratio,
        max_ratio=max_ratio, passed=within,
    )  # fmt: skip
    if not check.passed:
        summary: dict[str, object] = {"phi_rate": check.model_dump(mode="json")}
        raise PhiRateError(diagnosis(check, mode.phi_noun), summary=summary)
    return check


class PhiRateError(QualityGateError):
    """The generator writes far less, or far more, PHI than the real notes hold (exit 3)."""

    def __init__(self, message: str, *, summary: dict[str, object]) -> None:
        super().__init__(message)
        self.summary = summary


def _top(counts: dict[str, int], limit: int = 5) -> str:
    shown = ", ".join(f"{key!r} x{n}" for key, n in list(counts.items())[:limit])
    more = len(counts) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def seen(check: PhiRateCheck, what: str = "markers") -> str:
    """What the generator wrote besides the scheme's markers (``what``: the mode's noun for
    them), in words."""
    written = check.written
    parts = []
    if written.unknown:
        parts.append(
            f"{written.unknown} well-formed {what} naming labels outside the scheme "
            f"({_top(written.unknown_labels)})"
        )
    if written.malformed:
        parts.append(f"{written.malformed} malformed {what.split()[0][:-1]}-like strings")
    if written.plain:
        parts.append(
            f"{written.plain} identifiers in plain text ({_top(written.plain_identifiers)})"
        )
    return "; besides them it wrote " + ", ".join(parts) if parts else ""


def diagnosis(check: PhiRateCheck, what: str = "markers") -> str:
    """What was found (``what``: the mode's noun for its markers), why it matters and what to
    change: the cause named is the one the counts show (too many; labels outside the scheme;
    malformed markers; plain identifiers; no PHI at all)."""
    real, written = check.real, check.written
    found = (
        f"generate: in the first {written.notes} notes the generator wrote {written.mentions} "
        f"{what} of the scheme's labels ({written.per_1000_words:.1f} per 1,000 words, "
        f"{written.notes_with_phi} notes with any) against {real.per_1000_words:.1f} per 1,000 "
        f"words in the real training notes ({real.notes_with_phi} of {real.notes} notes with "
        f"PHI): {check.ratio:.0%} of the real rate"
    )
    too_many = check.max_ratio is not None and check.ratio > check.max_ratio
    if too_many:
        band = f", over the {check.max_ratio:.0%} that [generation] max_phi_rate allows"
    else:
        band = f", under the {check.min_ratio:.0%} that [generation] min_phi_rate asks"
    why, fix = _cause(check, too_many)
    return f"{found}{band}{seen(check, what)}; {why}; {fix}"


def _cause(check: PhiRateCheck, too_many: bool) -> tuple[str, str]:
    written = check.written
    if too_many:
        return (
            "too much PHI: a synthetic corpus this dense in identifiers teaches the annotator "
            "to tag ordinary words",
            "fix: let the generator see fewer PHI windows (lower [adapt] phi_window_repeat, "
            "e.g. 1), prompt fewer notes at an identifier (lower [generation] "
            "phi_prompt_share), or raise [generation] max_phi_rate (unset: no upper bound)",
        )
    if written.unknown and written.unknown >= written.malformed:
        return (
            "the generator writes placeholders but invents label names: it was adapted on "
            "markers it did not see as whole tokens, or on another label scheme",
            "fix: re-run from adapt (site-agent synthesize --from adapt) so that every "
            "scheme marker is one token of the generator, with more steps (raise [adapt] "
            "max_steps or remove it); notes with unknown labels are dropped either way",
        )
    if written.malformed:
        return (
            "the generator writes broken markers, which the mode cannot fill",
            "fix: adapt for more steps (raise [adapt] max_steps or remove it, or raise "
            "[adapt] epochs) or raise [generation] max_new_tokens if they are cut off",
        )
    if written.plain:
        return (
            "the generator writes identifiers as plain text instead of markers: those "
            "notes are refused, and what is left is poor in PHI",
            "fix: let the generator see more marked PHI (raise [adapt] phi_window_repeat, "
            "e.g. 3, or remove [adapt] max_steps/epochs so the recipe's steps apply)",
        )
    return (
        "a synthetic corpus this poor in PHI would teach the annotator to tag nothing, after "
        "hours of generation",
        "fix: let the generator see more PHI (raise [adapt] phi_window_repeat, e.g. 3, or "
        "remove [adapt] max_steps/epochs so the recipe's steps apply), prompt more notes with "
        "a PHI-bearing opening ([generation] phi_prompt_share, e.g. 0.5), or set "
        "[generation] min_phi_rate = 0 to generate anyway",
    )
