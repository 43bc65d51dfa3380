"""The generation-mode registry, prompts for notes that open with an identifier (issue 15),
and what reaches the generator in each mode: with planted names, template mode shows it none
(adaptation text and prompts), tagged and annotate modes only surrogates."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from protocol import Corpus, Document, Span
from shared.errors import ConfigError
from site_agent.adapt.data import training_texts
from site_agent.generate import backend as backend_registry
from site_agent.generate.backend import PromptJob
from site_agent.generate.modes import SeedNotes, mode_for, mode_names
from site_agent.generate.notes import generate_notes
from site_agent.generate.plan import opening, plan_generation
from site_agent.generate.prompts import prompt_renderer
from site_agent.generate.settings import GENERATION_MODES, GenerationSettings
from site_agent.pseudonymise.settings import PseudonymiseSettings
from tests.tiny_models import tiny_causal_lm

NAME, DATE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS"
PLANTED = ("Zacarías Quintanilla", "Eulalia Montenegro", "17/09/1961")
SEEN_PROMPTS: list[str] = []


def _note(doc_id: str, text: str) -> Document:
    """A note whose planted strings are its spans (names, then the date)."""
    spans = []
    for surface in PLANTED:
        at = text.find(surface)
        if at >= 0:
            spans.append(
                Span(start=at, end=at + len(surface), label=DATE if "/" in surface else NAME)
            )
    return Document(id=doc_id, text=text, spans=tuple(spans))


TRAIN = Corpus(
    documents=(
        _note("t1", "Zacarías Quintanilla, nacido el 17/09/1961, acude con su hija."),
        _note("t2", "Control de tensión. Lo atiende Eulalia Montenegro en consulta."),
    )
)
VALIDATION = Corpus(
    documents=(
        _note("v1", "Zacarías Quintanilla acude por disnea."),
        _note("v2", "Paciente de 80 años, sin alergias."),
        _note("v3", "Eulalia Montenegro revisa la analítica del 17/09/1961."),
    )
)


class SpyBackend:
    """Records every prompt it is given; writes one placeholder and one tag after each."""

    name = "spy"

    def __init__(self, model: object, adapter: object, settings: object, budget: int) -> None:
        self.tokens_generated = 0

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        SEEN_PROMPTS.extend(job.prompt for job in jobs)
        line = f" y {{{{{NAME}:2}}}} <{NAME}>Ana</{NAME}> vuelve."
        return [[f"{line} Nota {'ab'[i]}." for i in range(job.n)] for job in jobs]

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def spy_registered() -> Iterator[None]:
    backend_registry.register_backend("spy", lambda: SpyBackend)
    SEEN_PROMPTS.clear()
    yield
    backend_registry.BACKENDS.remove("spy")


def test_the_three_modes_are_registered_and_others_refused() -> None:
    assert mode_names() == ["annotate", "tagged", "template"] == list(GENERATION_MODES)
    assert mode_for("tagged").spans == "generator" and mode_for("annotate").spans == "annotator"
    with pytest.raises(ConfigError, match=r"\[generation\] mode = 'free'.*fix:"):
        mode_for("free")
    with pytest.raises(ValidationError, match="unknown generation mode 'free'"):
        GenerationSettings(mode="free")


def test_an_opening_keeps_a_cut_identifier_whole() -> None:
    doc = VALIDATION.documents[0]
    assert opening(doc, 1).text == "Zacarías Quintanilla"
    assert opening(doc, 3).text == "Zacarías Quintanilla acude"
    assert opening(doc, 3).spans == (Span(start=0, end=20, label=NAME),)


def test_notes_that_open_with_an_identifier_prompt_with_a_surrogate() -> None:
    """Issue 15: before, v1 and v3 gave no prompt (their first word is a name)."""
    render = prompt_renderer(mode_for("annotate"), PseudonymiseSettings())
    settings = GenerationSettings(samples_per_prompt=1, max_new_tokens=16)
    plan = plan_generation(VALIDATION, 2, settings, None, render)
    assert len(plan.prompts) == 3
    assert plan.prompts[1] == "Paciente de 80"
    for prompt in plan.prompts:
        assert not [p for p in PLANTED if p in prompt], prompt
    assert plan.prompts[0].endswith(" acude")  # three words: a name of two, then one
    without = plan_generation(VALIDATION, 2, settings, None)
    assert without.prompts == ("Paciente de 80",)


@pytest.mark.parametrize(
    ("mode", "marker"),
    [("annotate", None), ("tagged", f"<{NAME}>"), ("template", f"{{{{{NAME}:1}}}}")],
)
def test_prompts_render_as_the_mode_renders_training_notes(mode: str, marker: str | None) -> None:
    render = prompt_renderer(mode_for(mode), PseudonymiseSettings())
    (first, *_rest) = render(Corpus(documents=(opening(VALIDATION.documents[0], 3),)))
    texts = training_texts(TRAIN, mode_for(mode).render)
    if marker is None:
        assert texts == [d.text for d in TRAIN.documents]
        assert "<" not in first and "{{" not in first
    else:
        assert first.startswith(marker) and texts[0].startswith(marker)


def _run_generate(mode: str, tmp_path: Path) -> tuple[Corpus, dict[str, object]]:
    model = tiny_causal_lm(tmp_path / "lm", ["a b c"])
    settings = GenerationSettings(
        mode=mode, backend="spy", samples_per_prompt=2, max_new_tokens=16, batch_size=4
    )
    seeds = SeedNotes(TRAIN, PseudonymiseSettings(mode="none"))
    labelled, _prompts = generate_notes(
        tmp_path / "adapter",
        VALIDATION,
        seeds,
        str(model),
        settings,
        mode_for(mode),
        tmp_path / "out",
    )
    return labelled.corpus, labelled.summary


def test_template_mode_shows_the_generator_no_real_identifier(tmp_path: Path) -> None:
    """Planted names and a date, unpseudonymised training split: neither the adaptation text
    nor any prompt holds one; the filled notes carry exact spans."""
    adaptation = training_texts(TRAIN, mode_for("template").render)
    corpus, summary = _run_generate("template", tmp_path)
    lm_input = [*adaptation, *SEEN_PROMPTS]
    assert len(set(SEEN_PROMPTS)) == 3  # each of the 3 prompts, in every batch it is in
    for planted in PLANTED:
        assert not [t for t in lm_input if planted in t], planted
    assert all("{{" in p for p in SEEN_PROMPTS if not p.startswith("Paciente"))
    assert summary["placeholders"] and corpus.documents
    for doc in corpus.documents:
        assert "{{" not in doc.text and doc.spans
        for span in doc.spans:
            assert doc.surface(span) not in PLANTED and doc.surface(span).strip()
    assert corpus.provenance.notes["mode"] == "template"


def test_tagged_mode_reads_the_generators_tags_as_spans(tmp_path: Path) -> None:
    corpus, summary = _run_generate("tagged", tmp_path)
    assert [p for p in SEEN_PROMPTS if f"<{NAME}>" in p]
    for doc in corpus.documents:
        assert "<NOMBRE" not in doc.text and "</" not in doc.text
        assert "Ana" in [doc.surface(s) for s in doc.spans]
    assert summary["malformed_tags"] == 0 and summary["well_formed_pairs"] >= len(corpus)
    assert corpus.provenance.notes["mode"] == "tagged"


def test_synthesize_refuses_an_unknown_mode_before_running(tmp_path: Path) -> None:
    import subprocess

    result = subprocess.run(
        ["site-agent", "synthesize", "--demo", "--mode", "free", "--work-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 78
    assert "[generation -> mode] unknown generation mode 'free'" in result.stderr
    assert "fix:" in result.stderr
    assert not list(tmp_path.rglob("stage.json"))  # no stage ran


@pytest.mark.parametrize(("tag_errors", "kept"), [("repair", 2), ("reject", 1)])
def test_tagged_mode_repairs_or_rejects_notes_with_malformed_tags(
    tag_errors: str, kept: int
) -> None:
    generated = Corpus(
        documents=(
            Document(id="g1", text=f"Vino <{NAME}>Ana Gil</{NAME}> hoy."),
            Document(id="g2", text=f"Vino <{NAME}>Ana</{DATE}> y <{NAME}>Luis"),
        )
    )
    settings = GenerationSettings(mode="tagged", tag_errors=tag_errors)
    labelled = mode_for("tagged").label(generated, SeedNotes(TRAIN), settings)
    docs = labelled.corpus.documents
    assert len(docs) == kept
    assert docs[0].text == "Vino Ana Gil hoy." and docs[0].surface(docs[0].spans[0]) == "Ana Gil"
    if kept == 2:
        assert (docs[1].text, docs[1].spans) == ("Vino Ana y Luis", ())
    assert labelled.summary["malformed_tags"] == 3 and labelled.summary["well_formed_pairs"] == 1
    assert labelled.summary["malformed_tag_rate"] == pytest.approx(3 / 5)
    assert labelled.summary["rejected_documents"] == 2 - kept


@pytest.mark.parametrize(
    ("mode", "known", "unknown"),
    [
        ("template", f"Vino {{{{{NAME}:1}}}} hoy.", "Vino {{Nombre:1}} el {{FECHAS:1}}."),
        ("tagged", f"Vino <{NAME}>Ana Gil</{NAME}> hoy.", "Vino <Nombre>Ana Gil</Nombre> hoy."),
    ],
)
def test_a_note_with_an_unknown_label_is_dropped_and_counted(
    mode: str, known: str, unknown: str
) -> None:
    """Issue 46: a marker naming a label outside the scheme is never filled, kept or
    exported; its note is dropped and the label counted in the summary (stage.json)."""
    generated = Corpus(documents=(Document(id="g1", text=known), Document(id="g2", text=unknown)))
    settings = GenerationSettings(mode=mode)
    labelled = mode_for(mode).label(generated, SeedNotes(TRAIN), settings)
    assert [d.id for d in labelled.corpus.documents] == ["g1"]
    assert labelled.summary["unknown_labels"] == {"Nombre": 1}
    assert "Nombre" not in labelled.corpus.documents[0].text
    assert {s.label for s in labelled.corpus.documents[0].spans} == {NAME}
