"""``README.md`` model cards in the Hugging Face Hub's format, for every model folder we write.

One writer for both sides: the site's export (the synthetic-trained encoder in the bundle,
``site_agent/export/card.py``) and the coordinator (pooled, per-site, exported and FedAvg
models, ``coordinator/report/model_cards.py``). Each fills a :class:`ModelCard` from the
records it already binds (manifest, audit report, site report; the federation report) and
renders it here, so a card's figures are those records' figures. YAML front matter (licence,
language, base model, ``pipeline_tag``, tags, metrics, ``model-index``) then sections: labels,
training data, evaluation, intended use and limits, provenance. JSON is a subset of YAML, so
values are written as JSON scalars and flow collections; nothing here imports a YAML library.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from shared.atomic import atomic_write_text
from shared.markdown import CONTROL, markdown_cell

MODEL_CARD = "README.md"
PIPELINE_TAG = "token-classification"
TAGS = ("token-classification", "de-identification", "clinical-notes", "synthetic-data")
CARD_METRICS = ("f1", "precision", "recall")
# registry licence names (site_agent/models/catalog.py) -> Hub licence ids
HUB_LICENCES = {"Apache-2.0": "apache-2.0", "MIT": "mit", "Gemma-Terms-of-Use": "gemma"}


@dataclass(frozen=True)
class AuditFigure:
    """One privacy rule of the audit that cleared a synthetic corpus, with its figure."""

    rule: str
    measured: float | None
    comparison: str  # a protocol Comparison ("<=", ">=", ...), validated where it was read
    threshold: float
    passed: bool


@dataclass(frozen=True)
class TrainingSource:
    """One site's audited synthetic corpus a model was trained on (never a real note)."""

    site_id: str
    n_documents: int
    audit_passed: bool | None
    mode: str = ""  # generation mode, where the site's records name it
    figures: tuple[AuditFigure, ...] = ()


@dataclass(frozen=True)
class Figure:
    """One evaluation figure on one test split; ``low``/``high`` when a bootstrap ran."""

    split: str
    metric: str
    value: float
    low: float | None = None
    high: float | None = None
    n_documents: int | None = None


@dataclass(frozen=True)
class ModelCard:
    """What a card says; :func:`render_model_card` turns it into ``README.md``."""

    name: str
    built_by: str  # one sentence: who trained it, how
    base_model: str
    labels: tuple[str, ...]
    training: tuple[TrainingSource, ...]
    evaluation: tuple[Figure, ...] = ()
    provenance: tuple[tuple[str, str], ...] = ()
    licence: str = ""
    language: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _yaml(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _licence_lines(licence: str) -> list[str]:
    if licence in HUB_LICENCES:
        return [f"license: {HUB_LICENCES[licence]}"]
    if not licence:
        return ["license: other", 'license_name: "unknown (the base model\'s licence applies)"']
    return ["license: other", f"license_name: {_yaml(licence)}"]


def model_index(card: ModelCard) -> list[dict[str, object]]:
    """The Hub's ``model-index``: one result per test split, its figures as metrics."""
    results = []
    for split in dict.fromkeys(f.split for f in card.evaluation):
        metrics = [
            {"type": f.metric.split()[-1].lower(), "name": f.metric, "value": f.value}
            for f in card.evaluation
            if f.split == split
        ]
        results.append(
            {
                "task": {"type": PIPELINE_TAG, "name": "Token Classification"},
                "dataset": {"name": split, "type": "private-test-split", "split": "test"},
                "metrics": metrics,
            }
        )
    return [{"name": card.name, "results": results}]


def front_matter(card: ModelCard) -> list[str]:
    lines = ["---", *_licence_lines(card.licence)]
    if card.language:
        lines.append(f"language: {_yaml(list(card.language))}")
    lines += [
        f"base_model: {_yaml(card.base_model.split('@')[0])}",
        f"pipeline_tag: {PIPELINE_TAG}",
        "library_name: transformers",
        f"tags: {_yaml(list(TAGS))}",
        f"metrics: {_yaml(list(CARD_METRICS))}",
        f"model-index: {_yaml(model_index(card))}",
        "---",
    ]
    return lines


def _number(value: float | None) -> str:
    """Whole numbers (document counts) as integers, other figures with four decimals."""
    if value is None:
        return "n/a"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.4f}"


def _training_lines(card: ModelCard) -> list[str]:
    lines = [
        "Synthetic clinical notes only, generated at the site(s) below, machine-annotated "
        "there and cleared by the site's privacy audit before they left it. No real note, "
        "gold span or gold-trained weight is in this folder or was used to train it.",
        "",
        "| site | generation mode | synthetic documents | audit |",
        "|---|---|---|---|",
    ]
    verdicts = {True: "passed", False: "FAILED", None: "not reported"}
    for s in card.training:
        site, mode = markdown_cell(s.site_id), markdown_cell(s.mode or "not reported")
        lines.append(f"| {site} | {mode} | {s.n_documents} | {verdicts[s.audit_passed]} |")
    for s in (s for s in card.training if s.figures):
        lines += ["", f"Privacy figures of the audit at {markdown_cell(s.site_id)}:", ""]
        lines += ["| rule | measured | must be | passed |", "|---|---|---|---|"]
        lines += [
            f"| {markdown_cell(f.rule)} | {_number(f.measured)} | "
            f"{f.comparison} {f.threshold:g} | {'yes' if f.passed else 'no'} |"
            for f in s.figures
        ]
    return lines


def _evaluation_lines(card: ModelCard) -> list[str]:
    if not card.evaluation:
        return ["Not evaluated when this card was written."]
    lines = ["| test split | documents | metric | value | 95% CI |", "|---|---|---|---|---|"]
    for f in card.evaluation:
        ci = "-" if f.low is None or f.high is None else f"[{f.low:.4f}, {f.high:.4f}]"
        docs = "-" if f.n_documents is None else str(f.n_documents)
        split, metric = markdown_cell(f.split), markdown_cell(f.metric)
        lines.append(f"| {split} | {docs} | {metric} | {f.value:.4f} | {ci} |")
    return lines


LIMITS = (
    "Intended use: finding PHI/PII spans in clinical notes of the kind and language the "
    "training sites write, as one component of a de-identification pipeline that a person "
    "reviews (for example as a Presidio recognizer, see docs/presidio.md).",
    "Not for: de-identifying notes with no human review, notes of other note styles, "
    "languages or label schemes without evaluating it there first, or any decision about a "
    "patient.",
    "Limits: trained on synthetic notes only; the figures above are from the sites' own "
    "private test splits (real notes that never left the sites) and do not carry over to "
    "other hospitals. A missed span is a privacy leak: read the leakage figure.",
)


def code_span(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds (a label is data), on
    one line (a line break would end the span and start a forged row or heading)."""
    text = CONTROL.sub(" ", text)
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render_model_card(card: ModelCard) -> str:
    """``README.md``: front matter, then labels, training data, evaluation, use, provenance."""
    labels = ", ".join(code_span(label) for label in card.labels) or "none recorded"
    parts = [
        *front_matter(card),
        "",
        f"# {card.name}",
        "",
        card.built_by,
        "",
        "## Labels",
        "",
        f"IOB2 tags (`B-`/`I-` and `O`) over the entity labels {labels}.",
        "",
        "## Training data",
        "",
        *_training_lines(card),
        "",
        "## Evaluation",
        "",
        *_evaluation_lines(card),
        *[line for note in card.notes for line in ("", note)],
        "",
        "## Intended use and limits",
        "",
        *[f"- {line}" for line in LIMITS],
        "",
        "## Provenance",
        "",
        "| item | value |",
        "|---|---|",
        *[f"| {markdown_cell(item)} | {markdown_cell(value)} |" for item, value in card.provenance],
        "",
        "## How to load",
        "",
        "```python",
        "from transformers import pipeline",
        'tagger = pipeline("token-classification", model="path/to/this/folder",',
        '                  aggregation_strategy="first")',
        "```",
    ]
    return "\n".join(parts) + "\n"


def write_model_card(folder: Path, card: ModelCard) -> Path:
    """Write ``folder/README.md`` atomically; returns its path."""
    path = Path(folder) / MODEL_CARD
    atomic_write_text(path, render_model_card(card))
    return path
