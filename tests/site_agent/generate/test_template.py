"""Template-only generation (seed 002): placeholders, validation, the local filler (exact
offsets), deduplication against the seed notes and the PII mix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Corpus, Document, Span
from site_agent.audit.policy import FilterSettings, PiiEchoSettings
from site_agent.generate.dedup import deduplicate
from site_agent.generate.fill import MIN_FORBIDDEN_CHARS, FilledNote, fill_templates, shape_pool
from site_agent.generate.forbidden import forbidden_surfaces
from site_agent.generate.mix import pii_mix
from site_agent.generate.modes.template import identifier_like
from site_agent.generate.placeholders import PLACEHOLDER, insert_placeholders, read_template
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.pseudonymise.records import SurrogateRecord, write_surrogates
from site_agent.pseudonymise.settings import PseudonymiseSettings

NAME, DATE, AGE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS", "EDAD_SUJETO_ASISTENCIA"
TRAIN = Corpus(
    documents=(
        Document(
            id="t1",
            text="Ana Gil, 70 años, vista el 03/04/2019 con Luis Paz.",
            spans=(
                Span(start=0, end=7, label=NAME),
                Span(start=9, end=16, label=AGE),
                Span(start=27, end=37, label=DATE),
                Span(start=42, end=50, label=NAME),
            ),
        ),
        Document(id="t2", text="Sin datos.", spans=()),
    )
)
POOL = shape_pool(TRAIN)
ALLOWED = frozenset(POOL)


def test_placeholders_number_each_label_and_repeat_a_surface() -> None:
    doc = Document(
        id="d",
        text="Ana y Luis; Ana el 1/2/20",
        spans=(
            Span(start=0, end=3, label=NAME),
            Span(start=6, end=10, label=NAME),
            Span(start=12, end=15, label=NAME),
            Span(start=19, end=25, label=DATE),
        ),
    )
    assert insert_placeholders(doc) == (
        f"{{{{{NAME}:1}}}} y {{{{{NAME}:2}}}}; {{{{{NAME}:1}}}} el {{{{{DATE}:1}}}}"
    )


@pytest.mark.parametrize(
    ("generated", "problem"),
    [
        (f"Visto por {{{{{NAME}:1}}}}.", None),
        (f"Cortado {{{{{DATE}:", None),  # cut off by the token budget: dropped
        ("Visto por {{PACIENTE:1}}.", "placeholder label outside the allow-list: ['PACIENTE']"),
        (f"Visto por {{{{{NAME}:1}}.", "malformed placeholder"),
        ("Visto por {{nombre}} ayer.", "malformed placeholder"),
    ],
)
def test_templates_are_validated_against_the_allow_list(
    generated: str, problem: str | None
) -> None:
    assert read_template(generated, ALLOWED).problem == problem


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        (f"{{{{{DATE}:1}}}} ingresa", False),
        ("ingresa el 12/03/2018", True),
        ("llamar al 912 345 678", True),
        ("correo ana@hospital.es", True),
        ("dosis de 500 mg cada 8 horas", False),
    ],
)
def test_identifier_like_text_outside_placeholders_is_flagged(text: str, flagged: bool) -> None:
    assert (identifier_like(read_template(text, ALLOWED)) is not None) == flagged


TEMPLATE_TEXT = st.lists(
    st.one_of(
        st.text(st.sampled_from("abc ,.\nñ{}"), max_size=6).filter(lambda s: "{{" not in s),
        st.builds(
            lambda label, n: f"{{{{{label}:{n}}}}}",
            st.sampled_from(sorted(ALLOWED)),
            st.integers(1, 3),
        ),
    ),
    max_size=8,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(TEMPLATE_TEXT, st.integers(0, 1000))
def test_every_filled_span_is_its_placeholders_surrogate(text: str, seed: int) -> None:
    template = read_template(text, ALLOWED)
    if template.problem is not None:  # stray braces from the plain pieces
        return
    (note,) = fill_templates([("syn-0-0", template)], POOL, PseudonymiseSettings(), seed)
    doc = note.document
    assert len(doc.spans) == len(template.placeholders)
    for span, placeholder in zip(doc.spans, template.placeholders, strict=True):
        assert span.label == placeholder.label
        assert doc.surface(span) == note.surrogates[placeholder.key]
        assert doc.surface(span).strip()
    # the text between placeholders is the template's, untouched
    outside, cursor = [], 0
    for span in doc.spans:
        outside.append(doc.text[cursor : span.start])
        cursor = span.end
    outside.append(doc.text[cursor:])
    assert outside == PLACEHOLDER.split(template.text)[::3]


def test_a_placeholder_keeps_one_surrogate_and_none_is_a_seed_surface() -> None:
    template = read_template(
        f"{{{{{NAME}:1}}}} y {{{{{NAME}:2}}}} ven a {{{{{NAME}:1}}}} el {{{{{DATE}:1}}}}", ALLOWED
    )
    (note,) = fill_templates([("syn-1-0", template)], POOL, PseudonymiseSettings(), 13)
    names = [note.document.surface(s) for s in note.document.spans if s.label == NAME]
    assert names[0] == names[2] != names[1]
    seed_surfaces = {TRAIN.documents[0].surface(s) for s in TRAIN.documents[0].spans}
    assert not {note.document.surface(s) for s in note.document.spans} & seed_surfaces - {"70 años"}


COLLIDING = f"{{{{{NAME}:1}}}} y {{{{{NAME}:2}}}} el {{{{{DATE}:1}}}}, {{{{{AGE}:1}}}}"


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def _filled(forbidden: tuple[str, ...] = (), attempts: int = 8) -> list[FilledNote]:
    templates = [(f"syn-{i}-0", read_template(COLLIDING, ALLOWED)) for i in range(6)]
    return fill_templates(templates, POOL, PseudonymiseSettings(), 13, forbidden, attempts)


def test_a_fill_that_writes_a_forbidden_surface_is_filled_again_without_it() -> None:
    first = _filled()
    # forbid what the first fill wrote for two notes: a full name and a date, in another case
    # and spacing (the audit's matching ignores both)
    names = [first[0].surrogates[(NAME, 1)], first[3].surrogates[(DATE, 1)]]
    forbidden = tuple(f"  {n.upper()} " for n in names)
    again = _filled(forbidden)
    keys = {_words(n) for n in names}
    for after in again:
        surfaces = [_words(after.document.surface(s)) for s in after.document.spans]
        assert not any(key in surface for surface in surfaces for key in keys)
        assert after.collisions == 0
        for span, placeholder in zip(
            after.document.spans, read_template(COLLIDING, ALLOWED).placeholders, strict=True
        ):  # still exact by construction
            assert after.document.surface(span) == after.surrogates[placeholder.key]
    assert again[0].attempts > 1 and again[3].attempts > 1
    # a note without a collision is filled exactly as without forbidden surfaces
    untouched = [i for i in range(6) if i not in (0, 3) and first[i].collisions == 0]
    assert untouched
    for i in untouched:
        if again[i].attempts == 1:
            assert again[i].document == first[i].document


def test_collisions_left_after_the_last_attempt_are_counted_and_short_surfaces_ignored() -> None:
    first = _filled()
    name = first[0].surrogates[(NAME, 1)]
    (kept, *_) = _filled((name,), attempts=1)
    assert kept.document == first[0].document  # one attempt: nothing refilled
    assert kept.collisions == 1
    age = first[0].surrogates[(AGE, 1)].split()[0]  # "70": shorter than the PII echo searches
    assert len(age) < 4
    (same, *_) = _filled((age,), attempts=1)
    assert same.collisions == 0


def test_the_filler_ignores_exactly_the_surfaces_the_pii_echo_never_searches() -> None:
    assert PiiEchoSettings().min_chars == MIN_FORBIDDEN_CHARS


def test_a_fill_sharing_an_identifying_real_ngram_is_filled_again_without_it() -> None:
    first = _filled()
    # a real note that holds note 0's first fill word for word, its values as gold spans:
    # every 3-word run over one of them is an identifying n-gram the audit would drop it for
    real = Document(id="r0", text=first[0].document.text, spans=first[0].document.spans)
    filters = FilterSettings(sensitive_ngram_n=3, sensitive_ngram_min_share=0.5)
    index = IdentifyingIndex.build([real], filters)
    assert index.hits([first[0].document])[0] > 0
    templates = [(f"syn-{i}-0", read_template(COLLIDING, ALLOWED)) for i in range(6)]
    settings = PseudonymiseSettings()
    again = fill_templates(templates, POOL, settings, 13, identifying=index)
    assert again[0].attempts > 1
    assert again[0].identifying_ngrams == 0 == index.hits([again[0].document])[0]
    for before, after in zip(first, again, strict=True):
        if index.hits([before.document])[0] == 0:  # nothing shared: filled as before
            assert after.document == before.document and after.attempts == 1
        assert after.identifying_ngrams == index.hits([after.document])[0]
    # one attempt: nothing refilled, what is shared is counted for the audit
    (kept, *_) = fill_templates(templates, POOL, settings, 13, attempts=1, identifying=index)
    assert kept.document == first[0].document
    assert kept.identifying_ngrams == index.hits([first[0].document])[0] > 0


def test_the_generate_stage_forbids_originals_surrogates_and_training_spans(
    tmp_path: Path,
) -> None:
    records = tmp_path / "surrogates.jsonl"
    write_surrogates(
        [SurrogateRecord(doc_id="t1", label=NAME, original="Rosa Vidal", surrogate="Eva Ruiz")],
        records,
    )
    forbidden = forbidden_surfaces(TRAIN, records)
    assert set(forbidden) == {
        "Rosa Vidal",
        "Eva Ruiz",
        "Ana Gil",
        "Luis Paz",
        "70 años",
        "03/04/2019",
    }


def _doc(i: int, text: str, spans: tuple[Span, ...] = ()) -> Document:
    return Document(id=f"s{i}", text=text, spans=spans)


def test_dedup_drops_exact_and_near_copies_of_seeds_and_of_each_other() -> None:
    seed = "el paciente ingresa por dolor torácico de dos días de evolución sin fiebre"
    notes = [
        _doc(0, "El  paciente ingresa por dolor torácico de dos días de evolución sin fiebre"),
        _doc(1, seed + " ni tos"),  # near the seed
        _doc(2, "la paciente refiere cefalea intensa desde ayer y vómitos alimentarios"),
        _doc(3, "la paciente refiere cefalea intensa desde ayer y vómitos alimentarios."),
        _doc(4, "exploración física normal, auscultación cardiopulmonar sin hallazgos"),
    ]
    result = deduplicate(notes, [seed], threshold=0.7)
    assert [d.id for d in result.kept] == ["s2", "s4"]
    assert (result.exact, result.near) == (1, 2)


@given(threshold=st.floats(min_value=0.05, max_value=1.0), extra=st.integers(0, 3))
@settings(max_examples=40, deadline=None)
def test_dedup_works_at_any_threshold_and_drops_what_reaches_it(
    threshold: float, extra: int
) -> None:
    """Every threshold the setting allows works (datasketch alone refuses about 0.97 and up):
    no note is dropped below its threshold (the exact Jaccard decides), an exact copy always
    is, and at the wide bands of the highest thresholds a note that reaches it is."""
    from site_agent.generate.dedup import _shingles

    seed = " ".join(f"w{i}" for i in range(60))
    near = seed + "".join(f" x{i}" for i in range(extra))  # Jaccard 58/(58 + extra)
    other = " ".join(f"v{i}" for i in range(60))
    jaccard = len(_shingles(seed) & _shingles(near)) / len(_shingles(seed) | _shingles(near))
    result = deduplicate([_doc(0, near), _doc(1, other)], [seed], threshold=threshold)
    kept = [d.id for d in result.kept]
    assert "s1" in kept
    if extra == 0:
        assert "s0" not in kept and result.exact == 1
    elif jaccard < threshold:
        assert "s0" in kept
    elif threshold >= 0.97:  # wide bands: candidates from about Jaccard 0.5
        assert "s0" not in kept


def test_pii_mix_keeps_the_most_notes_at_the_asked_share() -> None:
    span = (Span(start=0, end=1, label=NAME),)
    notes = [_doc(i, f"x{i}", span if i % 4 == 0 else ()) for i in range(20)]  # 5 with PII
    half = pii_mix(notes, 0.5)
    assert sum(1 for d in half if d.spans) == 5 and len(half) == 10
    assert [d.id for d in half] == [d.id for d in notes if d in half]  # order kept
    assert all(d.spans for d in pii_mix(notes, 1.0)) and len(pii_mix(notes, 1.0)) == 5
    assert pii_mix(notes, None) == notes
    assert len(pii_mix(notes, 0.25)) == 20  # already the asked share
    few = pii_mix(notes, 0.1)  # every note without PII, and one in ten with
    assert (len(few), sum(1 for d in few if d.spans)) == (17, 2)
