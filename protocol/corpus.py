"""Documents with character-offset PII spans, and the corpora that hold them."""

from __future__ import annotations

import operator
import unicodedata
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.checks import duplicate_id_problems, span_problems


def _strict_offset(value: Any) -> int:
    """An integer offset: a string, boolean or float is refused, not coerced ("3" is no
    offset; ``true`` is not 1)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        kind = "boolean" if isinstance(value, bool) else type(value).__name__
        raise ValueError(
            f"a span offset must be an integer, not the {kind} {value!r}; fix: write offsets "
            "as JSON numbers without quotes, e.g. 12"
        )
    return operator.index(value)


Offset = Annotated[int, BeforeValidator(_strict_offset)]


def utf8_text(value: str, what: str) -> str:
    """``value`` once every character can be written as UTF-8 (no unpaired surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} holds the unpaired surrogate U+{ord(value[exc.start]):04X} at character "
            f"{exc.start}, which is not text (it cannot be written as UTF-8); fix: remove it "
            "or repair the escape (a \\ud800-\\udbff escape must be followed by a "
            "\\udc00-\\udfff one)"
        ) from None
    return value


MAX_LABEL_CHARS = 64
# control, format (invisible, bidi overrides), surrogate, line and paragraph separators
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@lru_cache(maxsize=4096)
def label_name(label: str) -> str:
    """``label`` once it is a label name that is data, not layout: at most
    ``MAX_LABEL_CHARS`` characters, valid UTF-8, and no control or format character (line
    breaks, escapes, invisible and bidi-override characters) and no line or paragraph
    separator (``REFUSED_CATEGORIES``). Any letters and digits of any
    script, ``_ - .``, spaces and other punctuation pass (reports and model cards escape them);
    what could forge a row, a heading or an invisible difference does not."""
    utf8_text(label, "the label")
    if len(label) > MAX_LABEL_CHARS:
        raise ValueError(
            f"label {label[:20]!r}... is {len(label)} characters, over {MAX_LABEL_CHARS}; fix: "
            "use a shorter label name (or map it with a label mapping)"
        )
    for position, char in enumerate(label):
        category = unicodedata.category(char)
        if category in REFUSED_CATEGORIES:
            raise ValueError(
                f"label {label!r} holds U+{ord(char):04X} ({category}) at character {position}, "
                "a control or invisible character; allowed: letters and digits of any script, "
                "spaces and punctuation; fix: rename the label in the corpus"
            )
    return label


LabelName = Annotated[str, AfterValidator(label_name)]


class Span(ProtocolModel):
    """A labelled character range ``text[start:end]`` (end exclusive).

    Bounds and overlaps are checked by the enclosing :class:`Document`, which knows the text
    and can name the document in its message.
    """

    start: Offset
    end: Offset
    label: LabelName


class Document(ProtocolModel):
    """One clinical note and its PII spans, sorted by position."""

    id: str = Field(min_length=1)
    text: str
    spans: tuple[Span, ...] = ()
    source: str | None = None
    meta: dict[str, Any] | None = None

    @field_validator("id", "text", "source")
    @classmethod
    def _utf8(cls, value: str | None) -> str | None:
        return value if value is None else utf8_text(value, "the value")

    @field_validator("spans")
    @classmethod
    def _sorted(cls, spans: tuple[Span, ...]) -> tuple[Span, ...]:
        return tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label)))

    @model_validator(mode="after")
    def _spans_fit_text(self) -> Document:
        problems = span_problems(self.id, self.text, self.spans)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def surface(self, span: Span) -> str:
        return self.text[span.start : span.end]


class Provenance(ProtocolModel):
    """Where an artifact came from: which tool made it, from what, and with which settings."""

    tool: str = "deid-synth"
    tool_version: str = ""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: str | None = None
    source_sha256: str | None = None
    config_digest: str | None = None
    parents: tuple[str, ...] = ()
    notes: dict[str, str] = Field(default_factory=dict)


class Corpus(ProtocolModel):
    """Documents plus their label set and provenance; ids are unique."""

    schema_version: str = SCHEMA_VERSION
    documents: tuple[Document, ...]
    labels: tuple[LabelName, ...] = ()
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="before")
    @classmethod
    def _derive_labels(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("labels"):
            docs = data.get("documents", ())
            labels = {
                (s["label"] if isinstance(s, dict) else s.label)
                for d in docs
                for s in (d["spans"] if isinstance(d, dict) else d.spans)
            }
            data = {**data, "labels": tuple(sorted(labels))}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Corpus:
        problems = duplicate_id_problems(d.id for d in self.documents)
        known = set(self.labels)
        for doc in self.documents:
            for span in doc.spans:
                if span.label not in known:
                    problems.append(
                        f"document {doc.id!r}: span [{span.start}, {span.end}) label "
                        f"{span.label!r} is not in the corpus label set {sorted(known)}; "
                        "fix: add it to the label set or map it with a label mapping"
                    )
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def __len__(self) -> int:
        return len(self.documents)

    def by_id(self) -> dict[str, Document]:
        return {d.id: d for d in self.documents}


class UnmappedLabelError(LookupError):
    """A site label has no entry in the label mapping."""


class LabelMapping(ProtocolModel):
    """Site labels mapped onto a shared coarse scheme (e.g. PER/ORG/LOC/TIME/ID/MISC)."""

    schema_version: str = SCHEMA_VERSION
    name: str
    coarse_labels: tuple[str, ...]
    mapping: dict[str, str]

    @model_validator(mode="after")
    def _targets_known(self) -> LabelMapping:
        bad = {k: v for k, v in self.mapping.items() if v not in self.coarse_labels}
        if bad:
            raise ValueError(
                f"label mapping {self.name!r} maps to labels outside its coarse scheme: "
                f"{bad}; fix: use one of {list(self.coarse_labels)} or add the target to "
                "coarse_labels"
            )
        return self

    def map_label(self, label: str) -> str:
        try:
            return self.mapping[label]
        except KeyError:
            raise UnmappedLabelError(
                f"label {label!r} has no entry in label mapping {self.name!r}; "
                f"fix: add '{label} = \"<one of {', '.join(self.coarse_labels)}>\"' to it"
            ) from None
