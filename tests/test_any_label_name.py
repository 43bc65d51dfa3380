"""Any label name a corpus format allows survives every stage of every generation mode
(issue 46: the template and tagged modes read only upper-case labels, so a hospital's
``Date`` or ``DoctorName`` was never read back, filled, annotated, exported or reported).

Hypothesis draws label schemes (mixed and lower case, digits, hyphens, dots, underscores,
non-ASCII letters, and punctuation a marker must escape); for each mode a tiny pipeline runs
on notes holding a span of every label: the mode renders the notes as the generator is
adapted on them (every marker one added token), a stand-in generator writes back what it
was adapted on (what a well-adapted generator does), the early PHI-rate check reads it, the
mode reads it into the synthetic corpus (the template filler filling the placeholders; in the
``annotate`` mode the annotator's IOB2 tag set encodes and decodes the spans), the corpus
goes through the export's JSONL and the coordinator's bundle parser, the site report's
figures are computed, and the coordinator maps and reports the figures. Every label must
come out as the corpus wrote it, and no marker may be left in the text.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator.mappings import merge_mappings
from coordinator.report.tables import recall_rows
from coordinator.report.write import markdown_cell, markdown_table
from protocol import Corpus, Document, LabelMapping, Span
from shared.bundle_verify import parse_corpus_bytes
from shared.corpus_io import label_problems
from shared.corpus_io.jsonl import document_line
from shared.metrics.diagnostics import corpus_diagnostics
from shared.metrics.model_metrics import evaluate_predictions
from shared.model_card import ModelCard, render_model_card
from shared.ner_tokens import iob2_labels, split_words, tags_to_spans, word_tags
from site_agent.generate.label_marks import marker_name
from site_agent.generate.modes import SeedNotes, mode_for
from site_agent.generate.phi_rate import check_phi_rate, real_rate
from site_agent.generate.settings import GenerationSettings

FIRST_MARKER = {"template": "{{{{{}:1}}}}", "tagged": "<{}>"}
SURFACES = ("Ana Ruiz", "12/03/2020", "Hospital Norte", "Bilbao", "4411")
LABEL_CHARACTERS = st.one_of(
    st.characters(categories=("Lu", "Ll", "Lo", "Nd")),
    st.sampled_from("-._"),
    st.sampled_from(" #:%/{}<>`|"),  # what a marker's own punctuation needs escaped
)
LABEL = st.text(LABEL_CHARACTERS, min_size=1, max_size=12).filter(
    lambda label: bool(label.strip()) and label != "O"
)
SCHEMES = st.lists(LABEL, min_size=1, max_size=3, unique=True)


OPENING = [
    f"Informe {i} de seguimiento: la evolucion clinica es favorable, sin fiebre, sin dolor, "
    "con buena tolerancia oral y deambulacion autonoma desde el ingreso en planta. "
    for i in range(4)
]
"""What the stand-in generator writes before the note it was adapted on, so that the
template mode's deduplication against the seed notes keeps its notes."""


def notes(labels: list[str]) -> Corpus:
    """Four short notes, each with one span of every label (surfaces vary per note)."""
    docs = []
    for n in range(4):
        text, spans = f"Nota {n} de alta.", []
        for i, label in enumerate(labels):
            surface = SURFACES[(n + i) % len(SURFACES)]
            text += " Visto "
            spans.append(Span(start=len(text), end=len(text) + len(surface), label=label))
            text += surface + " hoy."
        docs.append(Document(id=f"n{n}", text=text, spans=tuple(spans)))
    return Corpus(documents=tuple(docs))


def shifted(spans: tuple[Span, ...], by: int) -> tuple[Span, ...]:
    return tuple(Span(start=s.start + by, end=s.end + by, label=s.label) for s in spans)


def annotator_round_trip(corpus: Corpus, labels: list[str]) -> Corpus:
    """The spans as the annotator's IOB2 tag set carries them: encoded per word, decoded."""
    tags = set(iob2_labels(labels))
    docs = []
    for doc in corpus.documents:
        words = split_words(doc.text)
        tagged = word_tags(words, doc.spans)
        assert set(tagged) <= tags
        docs.append(doc.model_copy(update={"spans": tuple(tags_to_spans(words, tagged))}))
    return Corpus(documents=tuple(docs))


def synthetic_corpus(mode_name: str, train: Corpus, labels: list[str]) -> Corpus:
    """Render, "generate", check the PHI rate and read back as the mode does."""
    mode = mode_for(mode_name)
    rendered = [mode.render(doc) for doc in train.documents]
    added = set(mode.added_tokens(train))
    if mode.spans == "generator":  # every label's marker is in the notes and one added token
        for label in labels:
            marker = FIRST_MARKER[mode_name].format(marker_name(label))
            assert marker in added and all(marker in text for text in rendered)
    generated = Corpus(
        documents=tuple(
            Document(id=f"syn-{i}-0", text=OPENING[i] + text, meta={"prompt_index": i})
            for i, text in enumerate(rendered)
        )
    )
    scheme = frozenset(labels)
    check = check_phi_rate(
        mode, real_rate(train), generated.documents, [""] * len(rendered), scheme, 0.2, 5.0
    )
    if mode.spans == "generator":
        assert check is not None and check.passed
        assert check.written.mentions == check.real.mentions
        assert check.written.unknown_labels == {} and check.written.malformed == 0
    seeds = SeedNotes(train)
    settings = GenerationSettings(mode=mode_name)
    labelled = mode.label(generated, seeds, settings).corpus
    if mode.spans == "annotator":  # the annotate stage labels the plain notes
        plain = Corpus(
            documents=tuple(
                d.model_copy(update={"spans": shifted(t.spans, len(OPENING[i]))})
                for i, (d, t) in enumerate(zip(labelled.documents, train.documents, strict=True))
            )
        )
        return annotator_round_trip(plain, labels)
    return labelled


@pytest.mark.parametrize("mode", ["annotate", "tagged", "template"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=SCHEMES)
def test_every_label_survives_to_the_export_and_both_reports(mode: str, labels: list[str]) -> None:
    train = notes(labels)
    assert label_problems(train) == []
    synthetic = synthetic_corpus(mode, train, labels)
    # the filled (or read, or annotated) spans: every label, as written, at every note
    assert len(synthetic) == len(train)
    for doc in synthetic.documents:
        assert sorted(s.label for s in doc.spans) == sorted(labels)
        assert "{{" not in doc.text and "}}" not in doc.text
        assert not [label for label in labels if f"<{label}>" in doc.text]
    # the labels a marker escapes are named in the synthetic corpus's provenance
    escaped = {label: marker_name(label) for label in labels if marker_name(label) != label}
    if mode != "annotate" and escaped:
        assert json.loads(synthetic.provenance.notes["label_markers"]) == escaped
    else:
        assert "label_markers" not in synthetic.provenance.notes
    # the export's JSONL, read back as the coordinator parses a bundle
    shipped = parse_corpus_bytes("".join(map(document_line, synthetic.documents)).encode())
    assert {s.label for d in shipped.documents for s in d.spans} == set(labels)
    assert set(shipped.labels) >= set(labels)
    # the site report's per-label figures (real and synthetic diagnostics, recall per label)
    assert set(corpus_diagnostics(train).labels) == set(labels)
    assert set(corpus_diagnostics(shipped).labels) == set(labels)
    site_figures = evaluate_predictions(train, train, None, 0, 0)
    assert set(site_figures.label_recall) == set(labels)
    # the coordinator: the site's mapping merged, figures mapped, the report's tables
    coarse = tuple(f"C{i}" for i in range(len(labels)))
    site_mapping = dict(zip(labels, coarse, strict=True))
    mapping = merge_mappings([LabelMapping(name="m", coarse_labels=coarse, mapping=site_mapping)])
    mapped = evaluate_predictions(train, train, mapping, 0, 0)
    assert set(mapped.label_recall) == set(coarse)
    report_rows = recall_rows(_report(tuple(labels), site_figures))
    assert report_rows[0][2:] == labels and report_rows[1][2:] == ["1.000"] * len(labels)
    table = markdown_table(report_rows)
    assert all(markdown_cell(label) in table for label in labels)
    card = render_model_card(
        ModelCard(name="m", built_by="b", base_model="x", labels=tuple(labels), training=())
    )
    assert all(label in card for label in labels)


def _report(labels: tuple[str, ...], figures: object) -> object:
    from datetime import UTC, datetime

    from protocol import rounds

    when = datetime(2025, 1, 1, tzinfo=UTC)
    size = rounds.TestSplitSize(n_documents=4, n_spans=4, n_characters=100)
    return rounds.FederationReport(
        sites=(rounds.SiteSummary(site_id="a", labels=labels, test_split=size),),
        bundles=(),
        models=(),
        matrix=(rounds.CrossSiteCell(model="site-a", site_id="a", metrics=figures),),
        baselines=(),
        exclusions=(),
        labels=labels,
        provenance=rounds.ReportProvenance(
            tool_version="0", versions={}, config_digest="d", started_at=when, finished_at=when
        ),
    )
