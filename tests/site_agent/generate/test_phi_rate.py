"""The early PHI-rate check: a generator that writes no PHI stops after the first batches, with
the figures and the fix; one that writes enough goes on; the prompt's own markers do not count;
PHI-bearing prompts open at an identifier in the share asked."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from shared.errors import QualityGateError
from site_agent.generate import backend as backend_registry
from site_agent.generate.backend import PromptJob
from site_agent.generate.modes import mode_for
from site_agent.generate.phi_rate import (
    PhiRateError,
    check_phi_rate,
    placeholders_written,
    real_rate,
    written_rate,
)
from site_agent.generate.plan import GenerationPlan, phi_opening, phi_openings
from site_agent.generate.resumable import generate_corpus
from site_agent.generate.settings import GenerationSettings

LABELS = frozenset({"NAME", "DATE"})
BATCHES: list[int] = []
CONTINUATION = {"text": ""}


class SpyBackend:
    """Writes ``CONTINUATION`` for every note and counts the batches it was asked for."""

    name = "spy"

    def __init__(self, *args: object) -> None:
        pass

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        BATCHES.append(sum(j.n for j in jobs))
        return [[CONTINUATION["text"]] * job.n for job in jobs]

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def spy_registered() -> Iterator[None]:
    backend_registry.register_backend("spy", lambda: SpyBackend)
    BATCHES.clear()
    yield
    backend_registry.BACKENDS.remove("spy")


def _real(notes: int, with_phi: int) -> Corpus:
    """``notes`` notes of 10 words, ``with_phi`` of them with one name: 1 span per 100 words
    when all hold one."""
    docs = []
    for i in range(notes):
        text = "Paciente Ana ingresa hoy por dolor toracico sin fiebre ni"
        spans = (Span(start=9, end=12, label="NAME"),) if i < with_phi else ()
        docs.append(Document(id=f"r{i}", text=text, spans=spans))
    return Corpus(documents=tuple(docs))


PLAN = GenerationPlan(prompts=("Paciente {{NAME:1}}",), samples=(40,), max_new_tokens=20)


def _generate(tmp_path: Path, continuation: str, min_ratio: float) -> tuple[Corpus, list]:
    CONTINUATION["text"] = continuation
    real = real_rate(_real(20, 20))
    found: list = []

    def check(docs: Sequence[Document], plan: GenerationPlan) -> None:
        found.append(
            check_phi_rate(mode_for("template"), real, docs, plan.prompts, LABELS, min_ratio)
        )

    settings = GenerationSettings(backend="spy", batch_size=8)
    corpus = generate_corpus(
        PLAN, "org/tiny", None, settings, tmp_path / "g.jsonl", check=check, check_after=16
    )
    return corpus, found


def test_a_generator_without_phi_stops_after_the_first_batches(tmp_path: Path) -> None:
    with pytest.raises(PhiRateError) as raised:
        _generate(tmp_path, " ingresa hoy por dolor toracico sin fiebre ni tos", 0.25)
    assert BATCHES == [8, 8]  # 16 notes, then the check: not the 40 planned
    assert isinstance(raised.value, QualityGateError) and raised.value.exit_code == 3
    message = str(raised.value)
    assert "first 16 notes the generator wrote 0 placeholders" in message
    assert "100.0 per 1,000 words in the real training notes" in message
    assert "fix:" in message and "phi_window_repeat" in message and "min_phi_rate = 0" in message
    assert raised.value.summary["phi_rate"]["ratio"] == 0.0


def test_a_generator_that_writes_phi_goes_on_and_is_recorded(tmp_path: Path) -> None:
    # 1 placeholder in 10 words: 100 per 1,000 words, the real rate
    corpus, found = _generate(
        tmp_path, " y {{NAME:2}} ingresa hoy por dolor sin fiebre ni tos", 0.25
    )
    assert len(corpus) == 40 and sum(BATCHES) == 40
    assert len(found) == 1 and found[0].passed and found[0].ratio == pytest.approx(1.0)
    assert found[0].written.notes == 16


def test_zero_disables_nothing_but_the_stage_passes_no_check(tmp_path: Path) -> None:
    _, found = _generate(tmp_path, " nada", 0.0)  # ratio 0 >= 0: passes
    assert found[0].passed


# (continuation, markers per note counted) : the prompt's placeholder never counts
WRITTEN = [
    (" sin datos", 0),
    (" y {{NAME:2}}", 1),
    (" {{NAME:2}} y {{DATE:1}}", 2),
]


@pytest.mark.parametrize(("continuation", "count"), WRITTEN)
def test_written_rate_counts_only_what_follows_the_prompt(continuation: str, count: int) -> None:
    prompt = "Paciente {{NAME:1}}"
    doc = Document(id="d", text=prompt + continuation, meta={"prompt_index": 0})
    assert written_rate([doc], [prompt], placeholders_written, LABELS).mentions == count


def test_annotate_mode_is_not_checked() -> None:
    doc = Document(id="d", text="x", meta={"prompt_index": 0})
    annotate = mode_for("annotate")
    assert check_phi_rate(annotate, real_rate(_real(2, 2)), [doc], ["x"], LABELS, 0.25) is None


NOTE = Document(
    id="n",
    text="Informe de alta. Sin incidencias. Contacto con Ana Ruiz el lunes.",
    spans=(Span(start=47, end=55, label="NAME"),),
)


def test_phi_opening_ends_with_the_identifier_and_keeps_its_span() -> None:
    found = phi_opening(NOTE, 3)
    assert found.text == "incidencias. Contacto con Ana Ruiz"
    assert [found.surface(s) for s in found.spans] == ["Ana Ruiz"]


@pytest.mark.parametrize(("share", "at_identifier"), [(None, 0), (0.0, 0), (0.5, 2), (1.0, 4)])
def test_phi_openings_replace_phi_free_openings_first(
    share: float | None, at_identifier: int
) -> None:
    free = [Document(id=f"f{i}", text=f"Nota {i} sin datos.") for i in range(3)]
    validation = Corpus(documents=(NOTE, *free))
    openings = phi_openings(validation, 3, share)
    assert len(openings) == 4
    assert sum(o.text.endswith("Ana Ruiz") for o in openings) == at_identifier
    if at_identifier == 2:  # the two places given up are PHI-free notes', in order
        assert [o.id for o in openings if o.text.endswith("Ana Ruiz")] == ["n", "n"]
        assert openings[0].text == "Informe de alta." and openings[3].text == "Nota 2 sin"


def test_prompt_origin_records_the_words_each_prompt_really_took() -> None:
    """The private record names, for every prompt, the note, the word it starts at and how
    many it holds: a prompt cut around an identifier is recorded as such, not as an opening."""
    from site_agent.generate.plan import origin_summary, prompt_origin

    free = [Document(id=f"f{i}", text=f"Nota {i} sin datos.") for i in range(3)]
    validation = Corpus(documents=(NOTE, *free))
    plain = prompt_origin(validation, 3)
    assert [o["at_identifier"] for o in plain] == [False] * 4
    assert all(o["from_word"] == 0 for o in plain)
    shared = prompt_origin(validation, 3, 0.5)
    openings = phi_openings(validation, 3, 0.5)
    assert [o["note"] for o in shared] == [o.id for o in openings]
    for record, taken in zip(shared, openings, strict=True):
        note = next(d for d in validation.documents if d.id == taken.id)
        words = note.text.split()
        start = int(record["from_word"])
        assert " ".join(words[start : start + int(record["words"])]) == taken.text
    assert sum(bool(o["at_identifier"]) for o in shared) == 2
    assert origin_summary(shared)["prompts_at_identifier"] == 2


def test_prompts_render_when_one_note_gives_two_openings() -> None:
    """With a PHI share, a PHI-bearing note offers its opening and one at an identifier; the
    prompts are rendered as one corpus all the same (a sparse corpus's generate stage)."""
    from site_agent.generate.plan import build_prompts

    free = [Document(id=f"f{i}", text=f"Nota {i} sin datos.") for i in range(3)]
    validation = Corpus(documents=(NOTE, *free))
    assert [o.id for o in phi_openings(validation, 3, 1.0)].count("n") >= 2
    rendered: list[int] = []

    def render(openings: Corpus) -> list[str]:
        rendered.append(len(openings))
        return [d.text for d in openings.documents]

    prompts = build_prompts(validation, 3, render, 1.0)
    assert rendered == [4] and len(prompts) == 4
    assert sum(p.endswith("Ana Ruiz") for p in prompts) == 4


# (mode, what the generator wrote after the prompt, the cause the diagnosis names, counts in
# the 16 notes): each case of issue 46 stops the run with its own diagnosis, and its counts
# are recorded
PROMPTS = {"template": "Paciente {{NAME:1}}", "tagged": "Paciente <NAME>Ana</NAME>"}
CASES = [
    pytest.param(
        "template",
        " ingresa hoy por dolor toracico sin fiebre ni tos",
        "would teach the annotator to tag nothing",
        {"mentions": 0, "unknown_labels": {}, "malformed": 0, "plain_identifiers": {}},
        id="none-written",
    ),
    pytest.param(
        "template",
        " {{NAME:2}} {{NAME:3}} {{DATE:1}} {{NAME:4}} y {{DATE:2}}",
        "too much PHI",
        {"mentions": 80, "unknown_labels": {}, "malformed": 0, "plain_identifiers": {}},
        id="too-many",
    ),
    pytest.param(
        "template",
        " y {{NAME}} ingresa {{NAME 2}} hoy por dolor }} sin fiebre",
        "writes broken markers",
        {"mentions": 0, "unknown_labels": {}, "malformed": 48, "plain_identifiers": {}},
        id="malformed",
    ),
    pytest.param(
        "template",
        " y {{Nombre:1}} ingresa el {{Fecha:1}} por dolor sin fiebre",
        "invents label names",
        {"mentions": 0, "unknown_labels": {"Nombre": 16, "Fecha": 16}, "malformed": 0},
        id="unknown-labels",
    ),
    pytest.param(
        "template",
        " ingresa el 12/03/2021 con historia 12345678 sin fiebre",
        "writes identifiers as plain text",
        {"mentions": 0, "plain_identifiers": {"numeric date": 16, "long number": 16}},
        id="plain-identifiers",
    ),
    pytest.param(
        "tagged",
        " y <Nombre>Luis</Nombre> ingresa hoy por dolor sin fiebre",
        "invents label names",
        {"mentions": 0, "unknown_labels": {"Nombre": 16}, "malformed": 0},
        id="tagged-unknown-labels",
    ),
    pytest.param(
        "tagged",
        " y <NAME>Luis</DATE> ingresa hoy por dolor sin fiebre ni",
        "writes broken markers",
        {"mentions": 0, "unknown_labels": {}, "malformed": 32},
        id="tagged-malformed",
    ),
]


@pytest.mark.parametrize(("mode", "continuation", "cause", "counts"), CASES)
def test_each_case_stops_with_its_own_diagnosis_and_counts(
    mode: str, continuation: str, cause: str, counts: dict[str, object]
) -> None:
    prompt = PROMPTS[mode]
    docs = [
        Document(id=f"g{i}", text=prompt + continuation, meta={"prompt_index": 0})
        for i in range(16)
    ]
    real = real_rate(_real(20, 20))
    with pytest.raises(PhiRateError) as raised:
        check_phi_rate(mode_for(mode), real, docs, [prompt], LABELS, 0.25, 5.0)
    message = str(raised.value)
    assert cause in message and "fix:" in message
    others = {c.values[2] for c in CASES} - {cause}  # type: ignore[index]
    assert not [other for other in others if other in message]  # one diagnosis, not all
    recorded = raised.value.summary["phi_rate"]["written"]  # type: ignore[index]
    for key, value in counts.items():
        assert recorded[key] == value, key


def test_a_rate_within_the_band_passes_and_keeps_what_else_it_saw() -> None:
    prompt = PROMPTS["template"]
    text = prompt + " y {{NAME:2}} ingresa hoy {{Nombre:1}} por dolor sin fiebre ni"
    docs = [Document(id=f"g{i}", text=text, meta={"prompt_index": 0}) for i in range(4)]
    check = check_phi_rate(
        mode_for("template"), real_rate(_real(20, 20)), docs, [prompt], LABELS, 0.25, 5.0
    )
    assert check is not None and check.passed and check.written.mentions == 4
    assert check.written.unknown_labels == {"Nombre": 4}


@pytest.mark.parametrize(
    ("labels", "written"),
    [
        (frozenset({"Name", "date"}), " y {{Name:2}} el {{date:1}}"),
        (frozenset({"doctor-name", "ID.num"}), " y {{doctor-name:2}} el {{ID.num:1}}"),
        (frozenset({"Název", "Phone #"}), " y {{Název:2}} el {{Phone%20%23:1}}"),
    ],
)
def test_placeholders_of_any_label_count_as_mentions(labels: frozenset[str], written: str) -> None:
    found = placeholders_written(written, labels)
    assert (found.mentions, found.unknown, found.malformed) == (2, {}, 0)
