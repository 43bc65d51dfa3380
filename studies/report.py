"""``experiment.json``, ``experiment.md`` and ``plots/<study>.png``.

Each study is one table: a row per condition with ``mean ± sd [95% CI]`` over its repeats of
the model's token F1 (seqeval), exact and overlap span F1 and document leakage, the gold
annotator's token F1 beside it, and the privacy figures of the audit of the synthetic corpus
the row trained on. A study that varies an audit setting or the synthetic source (audited or
unfiltered) also gets the gate's utility cost and ``plots/<study>-privacy-utility.png``: token
F1 against the privacy figures, one point per condition.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from shared.atomic import atomic_write_bytes, atomic_write_text
from shared.metrics.repeats import RepeatSummary
from shared.provenance import tool_version
from studies.results import ConditionSummary, RunResult, summarise
from studies.spec import ExperimentSpec, Study

UTILITY_COLUMNS = (
    ("token_f1", "token F1"),
    ("exact_f1", "exact F1"),
    ("overlap_f1", "overlap F1"),
    ("leakage_rate", "doc leakage"),
    ("gold_token_f1", "gold token F1"),
)
PRIVACY_COLUMNS = (
    ("sensitive_5gram_recall", "sens. 5-gram recall"),
    ("nearest_rouge_max", "nearest ROUGE max"),
    ("pii_echo_documents", "gold PII echo docs"),
    ("membership_auc", "membership AUC"),
)
# the privacy axes of a privacy-utility curve, where measured
CURVE_FIGURES = (
    ("membership_auc", "membership AUC (0.5 = chance)"),
    ("nearest_rouge_max", "max ROUGE-5 recall to a real note"),
    ("sensitive_5gram_recall", "sensitive 5-gram recall"),
    ("pii_echo_documents", "notes echoing a real gold PII string"),
)
SIZE_COLUMNS = (("n_real", "real"), ("n_synthetic", "synthetic"))
MEMBERSHIP_NOTE = (
    "Membership canaries (mean over repeats of the figures of each run's synthetic corpus): "
    "secrets the generator wrote, before the audit's filters and after them (the corpus the "
    "run trained on); the strongest attack's AUC, planted vs kept-out canaries, with its "
    "bootstrap CI; TPR at low FPR; exposure in bits (log2 of the candidates, the maximum)."
)


def show(summary: RepeatSummary | None, interval: bool = True) -> str:
    if summary is None:
        return "n/a"
    text = f"{summary.mean:.3f} ± {summary.sd:.3f}"
    if interval and summary.n > 1:
        text += f" [{summary.low:.3f}, {summary.high:.3f}]"
    return text


def count(summary: RepeatSummary | None) -> str:
    """A document count: whole when every repeat drew the same, else its mean."""
    if summary is None:
        return "n/a"
    return f"{summary.mean:.0f}" if summary.sd == 0 else f"{summary.mean:.1f}"


def _knob(condition: dict[str, object], name: str) -> str:
    overrides = condition.get("overrides", {})
    value = overrides.get(name) if isinstance(overrides, dict) and "." in name else None
    if value is None:
        value = condition.get(name)
    if name == "data_fraction":
        value = condition.get("annotator_fraction")
    return "–" if value is None else str(value)


def _knob_cells(knobs: Sequence[str], row: ConditionSummary) -> list[str]:
    """A table row's first cells: the value of each knob (``condition``: its whole label)."""
    return [row.condition_label if k == "condition" else _knob(row.condition, k) for k in knobs]


def study_table(study: Study, rows: Sequence[ConditionSummary]) -> list[str]:
    knobs = study.varied() or ["condition"]
    columns = [*UTILITY_COLUMNS, *PRIVACY_COLUMNS]
    header = [*knobs, "runs", *(title for _, title in columns), *(t for _, t in SIZE_COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = _knob_cells(knobs, row)
        cells.append(f"{row.n_runs - row.n_failed}/{row.n_runs}")
        cells += [show(row.metrics.get(name), name in dict(UTILITY_COLUMNS)) for name, _ in columns]
        cells += [count(row.metrics.get(name)) for name, _ in SIZE_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _knobs_set(knobs: Sequence[str], row: ConditionSummary, short: bool = False) -> list[str]:
    """``knob=value`` for every knob of ``knobs`` the condition sets (``short``: the last part
    of a dotted knob only)."""
    return [
        f"{k.rsplit('.', 1)[-1] if short else k}={_knob(row.condition, k)}"
        for k in knobs
        if _knob(row.condition, k) != "–"
    ]


def _column(study: Study, row: ConditionSummary) -> str:
    """A condition named by every knob its study varies that it sets."""
    knobs = study.varied()
    if not knobs:
        return row.condition_label
    return ", ".join(_knobs_set(knobs, row)) or "default"


def per_label_table(study: Study, rows: Sequence[ConditionSummary]) -> list[str]:
    labels = sorted({label for row in rows for label in row.per_label})
    if not labels:
        return []
    header = ["label", *(_column(study, row) for row in rows)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label in labels:
        cells = [label]
        for row in rows:
            summary = row.per_label.get(label)
            cells.append("n/a" if summary is None else f"{summary.mean:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _mean(row: ConditionSummary, name: str, digits: int = 3) -> str:
    summary = row.metrics.get(name)
    return "n/a" if summary is None else f"{summary.mean:.{digits}f}"


def membership_table(study: Study, rows: Sequence[ConditionSummary]) -> list[str]:
    """The membership attack per condition (issue 14), where canaries were planted: what the
    generator wrote, what the training corpus kept, and how well members are told apart."""
    measured = [r for r in rows if "membership_auc" in r.metrics]
    if not measured:
        return []
    knobs = study.varied() or ["condition"]
    header = [
        *knobs,
        "canaries planted / kept out",
        "secrets written (of them planted)",
        "secrets in the training corpus",
        "AUC [95% CI]",
        "TPR at 1% / 0.1% FPR",
        "exposure, planted / kept out (max)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in measured:
        cells = _knob_cells(knobs, row)
        cells += [
            f"{_mean(row, 'membership_members', 0)} / {_mean(row, 'membership_non_members', 0)}",
            f"{_mean(row, 'membership_secrets_written', 0)} "
            f"({_mean(row, 'membership_members_written', 0)})",
            _mean(row, "membership_secrets_reproduced", 0),
            f"{_mean(row, 'membership_auc')} [{_mean(row, 'membership_auc_ci_low')}, "
            f"{_mean(row, 'membership_auc_ci_high')}]",
            f"{_mean(row, 'membership_tpr_at_1pct_fpr')} / "
            f"{_mean(row, 'membership_tpr_at_0_1pct_fpr')}",
            f"{_mean(row, 'membership_exposure_members', 2)} / "
            f"{_mean(row, 'membership_exposure_non_members', 2)} "
            f"({_mean(row, 'membership_exposure_max', 1)})",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def is_privacy_study(study: Study) -> bool:
    """A study that moves the gate: it varies an audit setting or the synthetic source."""
    return any(k.startswith("audit.") or k == "synthetic_source" for k in study.varied())


def gate_cost(rows: Sequence[ConditionSummary]) -> list[str]:
    """Token F1 on the unfiltered minus on the audited corpus, for each pair of conditions
    that differ only in ``synthetic_source`` (the utility the gate costs)."""
    pairs: dict[str, dict[str, ConditionSummary]] = {}
    for row in rows:
        rest = {k: v for k, v in row.condition.items() if k != "synthetic_source"}
        source = str(row.condition.get("synthetic_source", "audited"))
        pairs.setdefault(json.dumps(rest, sort_keys=True, default=str), {})[source] = row
    lines = []
    for pair in pairs.values():
        if {"audited", "unfiltered"} <= set(pair):
            f1 = {s: pair[s].metrics.get("token_f1") for s in ("audited", "unfiltered")}
            if f1["audited"] is None or f1["unfiltered"] is None:
                continue
            cost = f1["unfiltered"].mean - f1["audited"].mean
            lines.append(
                f"- Utility cost of the gate ({pair['audited'].condition_label}): token F1 "
                f"{f1['unfiltered'].mean:.3f} on the unfiltered vs {f1['audited'].mean:.3f} on "
                f"the audited corpus: {100 * cost:+.2f} points (unfiltered - audited)."
            )
    return lines


def _point_label(knobs: Sequence[str], row: ConditionSummary) -> str:
    """A point's label: the value of a single varied knob, else each knob it sets (short)."""
    if len(knobs) == 1:
        return _knob(row.condition, knobs[0])
    return "\n".join(_knobs_set(knobs, row, short=True)) or "default"


def plot_privacy_utility(study: Study, rows: Sequence[ConditionSummary]) -> bytes | None:
    """Token F1 (± 1 SD over repeats) against each measured privacy figure of the corpus
    each condition trained on, one point per condition, labelled with its knob value (with
    several knobs: numbered, and the numbers explained under the panels)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes_figures = [
        (name, title) for name, title in CURVE_FIGURES if any(name in r.metrics for r in rows)
    ]
    if not axes_figures:
        return None
    knobs = study.varied()
    # one knob: points carry its value; several: a number, explained under the panels
    labels = [_point_label(knobs, row) for row in rows]
    numbered = len(knobs) > 1
    columns = min(2, len(axes_figures))
    lines = -(-len(axes_figures) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(6 * columns, 4 * lines), squeeze=False)
    for ax in axes.flat[len(axes_figures) :]:
        ax.set_visible(False)
    for ax, (name, title) in zip(axes.flat, axes_figures, strict=False):
        points = [
            (row.metrics[name].mean, row.metrics["token_f1"], str(i + 1) if numbered else label)
            for i, (row, label) in enumerate(zip(rows, labels, strict=True))
            if name in row.metrics and "token_f1" in row.metrics
        ]
        points.sort(key=lambda p: p[0])
        ax.errorbar(
            [p[0] for p in points], [p[1].mean for p in points],
            yerr=[p[1].sd for p in points], marker="o", capsize=3,
        )  # fmt: skip
        for x, f1, value in points:
            ax.annotate(value, (x, f1.mean), textcoords="offset points", xytext=(4, 4))
        ax.set_xlabel(title)
        ax.set_ylabel("token F1")
    if numbered:
        legend = "   ".join(
            f"{i + 1}: {label.replace(chr(10), ', ')}" for i, label in enumerate(labels)
        )
        figure.text(0.01, 0.005, legend, fontsize=8, wrap=True, va="bottom")
    figure.suptitle(f"{study.title or study.name}: privacy-utility")
    figure.tight_layout(rect=(0, 0.05 if numbered else 0, 1, 1))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()


def render_markdown(
    spec: ExperimentSpec, results: Sequence[RunResult], summaries: Sequence[ConditionSummary]
) -> str:
    failed = [r for r in results if r.status == "failed"]
    reused = sum(1 for r in results for s in r.stages if s["status"] == "reused")
    total = sum(len(r.stages) for r in results)
    lines = [
        f"# Experiment: {spec.experiment.name}",
        "",
        f"{len(results)} runs ({len(failed)} failed); repeats per condition: "
        f"{spec.experiment.repeats} by {spec.experiment.repeat_by}; stages reused from the "
        f"store: {reused} of {total}.",
        "",
        "Cells: mean ± SD over repeats [95% bootstrap CI of the mean]. Doc leakage: share of "
        "test documents with at least one gold span missed under overlap matching. Privacy "
        "columns come from the audit of the synthetic corpus each run trained on.",
    ]
    for study in spec.study:
        rows = [s for s in summaries if s.study == study.name]
        lines += ["", f"## {study.name}: {study.title}" if study.title else f"## {study.name}"]
        lines += ["", *study_table(study, rows)]
        labels = per_label_table(study, rows)
        if labels:
            lines += ["", "Overlap recall per label (mean over repeats):"]
            lines += ["", *labels]
        membership = membership_table(study, rows)
        if membership:
            lines += ["", MEMBERSHIP_NOTE, "", *membership]
        lines += ["", f"![{study.name}](plots/{study.name}.png)"]
        if is_privacy_study(study):
            cost = gate_cost(rows)
            lines += ["", *cost] if cost else []
            curve = f"plots/{study.name}-privacy-utility.png"
            lines += ["", f"![{study.name} privacy-utility]({curve})"]
    if failed:
        lines += ["", "## Failed runs", ""]
        lines += [f"- `{r.run_id}`: {r.error}" for r in failed]
    return "\n".join(lines) + "\n"


def plot_study(study: Study, rows: Sequence[ConditionSummary]) -> bytes:
    """Utility (top) and document leakage (bottom) against the first varied knob, ± 1 SD."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    knob = (study.varied() or ["condition"])[0]
    ticks = [
        row.condition_label if knob == "condition" else _knob(row.condition, knob) for row in rows
    ]
    xs = list(range(len(rows)))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for name, title in (("token_f1", "token F1"), ("overlap_f1", "overlap F1")):
        stats = [row.metrics.get(name) for row in rows]
        top.errorbar(
            xs, [s.mean if s else float("nan") for s in stats],
            yerr=[s.sd if s else 0.0 for s in stats], marker="o", capsize=3, label=title,
        )  # fmt: skip
    top.set_ylabel("F1")
    top.legend()
    stats = [row.metrics.get("leakage_rate") for row in rows]
    bottom.errorbar(
        xs, [s.mean if s else float("nan") for s in stats],
        yerr=[s.sd if s else 0.0 for s in stats], marker="o", capsize=3, color="tab:red",
    )  # fmt: skip
    bottom.set_ylabel("document leakage")
    bottom.set_xticks(xs, ticks, rotation=30, ha="right")
    bottom.set_xlabel(knob)
    figure.suptitle(study.title or study.name)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()


def write_reports(spec: ExperimentSpec, results: Sequence[RunResult], out_dir: Path) -> None:
    """The three reports into ``out_dir`` (each written atomically)."""
    summaries = summarise(results)
    payload = {
        "tool_version": tool_version(),
        "spec": spec.model_dump(mode="json"),
        "summaries": [s.model_dump(mode="json") for s in summaries],
        "runs": [r.model_dump(mode="json") for r in results],
    }
    atomic_write_text(out_dir / "experiment.json", json.dumps(payload, indent=2) + "\n")
    atomic_write_text(out_dir / "experiment.md", render_markdown(spec, results, summaries))
    for study in spec.study:
        rows = [s for s in summaries if s.study == study.name and s.metrics]
        if rows:
            atomic_write_bytes(out_dir / "plots" / f"{study.name}.png", plot_study(study, rows))
        curve = plot_privacy_utility(study, rows) if rows and is_privacy_study(study) else None
        if curve is not None:
            name = f"{study.name}-privacy-utility.png"
            atomic_write_bytes(out_dir / "plots" / name, curve)
