"""Issue 50: what a site controls reaches model cards and reports as inert text.

Before: rule names, generation modes and labels from a site's records went into the
coordinator's model cards raw (HTML, Markdown, a line break that forges a row or a heading),
labels could be any string, and the coordinator copied the ``encoder/README.md`` of a bundle
into the exported model's folder. Now labels are data by type (``protocol.corpus.LabelName``:
no control or invisible character, at most 64 characters), every site-controlled string in a
card is one escaped cell (``shared/markdown.py``), and the receiver writes every card itself.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from coordinator.aggregate.exported import exported_encoders
from coordinator.collect.phase import collect
from coordinator.deployment.keys import load_registry
from protocol import Corpus, Document, Span
from protocol.export import ExportManifest
from shared.model_card import AuditFigure, ModelCard, TrainingSource, render_model_card
from site_agent.client_app import app as client_app
from tests.coordinator.state import run_state
from tests.security.hostile import HostileGrid, add_encoder
from tests.security.test_hostile_site_replies import (  # noqa: F401 (the module's fixture)
    BERT,
    GOOD_WEIGHTS,
    HOSTILE,
    NODES,
    Sites,
    honest_config,
    signed,
    sites,
)

FORGED = "ngram\n## Verdict: safe to publish\n| forged | row |\n<script>alert(1)</script>"


def _card(rule: str, mode: str, label: str) -> str:
    figure = AuditFigure(rule, 0.1, "<=", 0.5, True)
    source = TrainingSource("site-a", 10, True, mode=mode, figures=(figure,))
    card = ModelCard("deid-synth export:site-a", "Built.", "tiny", (label,), (source,))
    return render_model_card(card)


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_site_strings_in_a_card_cannot_forge_rows_headings_or_html() -> None:
    page = _card(rule=FORGED, mode=FORGED, label="PER`|<b>x</b>")
    lines = page.splitlines()
    assert not any(line.startswith("## Verdict") for line in lines), page
    assert "<script>" not in page
    assert page.count("<b>") == 1 and "``PER`|<b>x</b>``" in page  # a code span: shown as text
    for line in lines:
        if line.startswith("| ngram") or line.startswith("| site-a"):
            assert _unescaped_pipes(line) == 5, line  # four cells, nothing forged
    assert not any(line.startswith("| forged") for line in lines)


@pytest.mark.parametrize(
    "label", ["Date", "doctor-name", "Fecha.1", "NOMBRE_SUJETO_ASISTENCIA", "Größe", "日付", "x y"]
)
def test_label_names_of_any_script_are_data(label: str) -> None:
    doc = Document(id="d", text="abc", spans=(Span(start=0, end=1, label=label),))
    assert Corpus(documents=(doc,)).labels == (label,)


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ("PER\n## Verdict", "U+000A"),
        ("PER\u2028row", "U+2028"),
        ("PER\u200bX", "U+200B"),  # invisible: two labels that print alike
        ("A" * 65, "65 characters, over 64"),
    ],
)
def test_label_names_that_are_layout_are_refused_at_the_protocol(label: str, why: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(why)):
        Span(start=0, end=1, label=label)
    with pytest.raises(ValidationError, match=re.escape(why)):
        ExportManifest.model_validate({"labels": [label]})


def test_the_senders_encoder_card_is_never_copied(sites: Sites, tmp_path: Path) -> None:  # noqa: F811
    bundle = Path(shutil.copytree(sites.hostile, tmp_path / "bundle"))
    card = b"# Trusted model\n<script>alert(1)</script>\n"
    files = {"model.safetensors": GOOD_WEIGHTS, "config.json": json.dumps(BERT).encode()}
    add_encoder(bundle, {**files, "README.md": card}, sites.hostile_keys.private)
    grid = HostileGrid(client_app, {1: honest_config(sites), 2: {}}, {2: signed(bundle, sites)})
    state = run_state(tmp_path, NODES)
    state.registry = load_registry(sites.registry)
    collect(grid, state)
    assert HOSTILE in state.bundles, state.exclusions
    (model,) = exported_encoders({HOSTILE: state.bundles[HOSTILE]}, tmp_path / "models")
    assert (model.model_dir / "config.json").is_file()
    assert not (model.model_dir / "README.md").exists()


def test_an_encoder_card_that_is_not_text_is_refused(sites: Sites, tmp_path: Path) -> None:  # noqa: F811
    bundle = Path(shutil.copytree(sites.hostile, tmp_path / "bundle"))
    files = {"model.safetensors": GOOD_WEIGHTS, "config.json": json.dumps(BERT).encode()}
    add_encoder(bundle, {**files, "README.md": b"\xff\xfe\x00binary"}, sites.hostile_keys.private)
    grid = HostileGrid(client_app, {1: honest_config(sites), 2: {}}, {2: signed(bundle, sites)})
    state = run_state(tmp_path, NODES)
    state.registry = load_registry(sites.registry)
    collect(grid, state)
    assert HOSTILE not in state.bundles
    assert (HOSTILE, "malformed_bundle") in {(e.site_id, e.reason) for e in state.exclusions}
