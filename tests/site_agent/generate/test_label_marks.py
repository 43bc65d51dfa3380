"""A label inside a placeholder or tag (issue 46): written so the markers' punctuation cannot
be confused, read back to exactly the label, whatever the label holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol import Document, Span
from site_agent.generate.label_marks import label_of, marker_name
from site_agent.generate.placeholders import PLACEHOLDER, insert_placeholders, read_template
from site_agent.generate.tags import TAG, insert_tags, read_tags

LABELS = st.text(min_size=1, max_size=16).filter(lambda label: label.strip() != "")
# what a Span may carry (issue 50: no control, format or line-separator character)
SPAN_LABELS = st.text(
    st.characters(exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1, max_size=16
).filter(lambda label: label.strip() != "")


@given(LABELS)
def test_a_marker_name_reads_back_to_its_label_and_is_one_marker_word(label: str) -> None:
    name = marker_name(label)
    assert label_of(name) == label
    assert PLACEHOLDER.fullmatch(f"{{{{{name}:1}}}}") and TAG.fullmatch(f"<{name}>")


def test_word_characters_dots_and_hyphens_are_written_as_they_are() -> None:
    for label in ("Date", "doctor-name", "ID.num", "Fecha_Día", "Název", "2014id"):
        assert marker_name(label) == label
    assert marker_name("Phone #") == "Phone%20%23" and marker_name("a%b") == "a%25b"


@given(st.lists(SPAN_LABELS, min_size=1, max_size=3, unique=True))
def test_placeholders_and_tags_of_any_labels_read_back_as_spans(labels: list[str]) -> None:
    text, spans = "Nota.", []
    for label in labels:
        text += " Vio a "
        spans.append(Span(start=len(text), end=len(text) + 3, label=label))
        text += "Ana hoy."
    doc = Document(id="d", text=text, spans=tuple(spans))
    template = read_template(insert_placeholders(doc), frozenset(labels))
    assert template.problem is None
    assert [p.label for p in template.placeholders] == labels
    reading = read_tags(insert_tags(doc), frozenset(labels))
    assert (reading.text, reading.malformed, reading.unknown) == (text, 0, {})
    assert [(s.start, s.end, s.label) for s in reading.spans] == [
        (s.start, s.end, s.label) for s in spans
    ]
