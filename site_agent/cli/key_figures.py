"""One figure a stage, in words, for the closing table of ``site-agent synthesize``.

Each stage's entry reads its own ``stage.json`` summary and says the one thing an operator
wants from it; the full record stays in ``stage.json``. A stage without an entry, or a record
an entry cannot read (written by an older version), gets its plain numbers and words, never
a Python repr of a nested value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Summary = Mapping[str, Any]


def _count(n: Any, one: str, many: str | None = None) -> str:
    return f"{int(n):,} {one if int(n) == 1 else (many or one + 's')}"


def _split(s: Summary) -> str:
    return (
        f"{_count(s['train_documents'], 'training note')}, {int(s['validation_documents']):,} "
        f"for validation, {int(s['test_documents']):,} for test"
    )


def _pseudonymise(s: Summary) -> str:
    said = f"{_count(s['replacements'], 'identifier')} replaced in {_count(s['documents'], 'note')}"
    canaries = int(s.get("canaries") or 0) + int(s.get("membership_canaries") or 0)
    return said + (f"; {_count(canaries, 'canary', 'canaries')} planted" if canaries else "")


def _annotator(s: Summary) -> str:
    recall = s.get("recall")
    said = f"{s['base_model']} trained for {_count(s['epochs'], 'epoch')}"
    return said + (f", validation recall {float(recall):.2f}" if recall is not None else "")


def _adapt(s: Summary) -> str:
    steps = s.get("steps") or {}
    run, estimated = steps.get("run"), steps.get("estimated")
    said = f"{s['base_model']} adapted"
    if run is not None:
        said += f" in {_count(run, 'step')}"
        if estimated is not None:
            said += f" (estimated {int(estimated):,})"
    return said


def _generate(s: Summary) -> str:
    said = f"{_count(s['documents'], 'synthetic note')} ({s['mode']} mode)"
    runs = s.get("generation_runs")
    return said + (f", over {_count(runs, 'run')}" if runs and int(runs) > 1 else "")


def _annotate(s: Summary) -> str:
    return f"{_count(s['spans'], 'identifier span')} labelled by the {s['spans_from']}"


def _audit(s: Summary) -> str:
    kept, given = int(s["kept"]), int(s["input"])
    return f"{kept:,} of {given:,} synthetic notes passed the audit ({given - kept:,} dropped)"


def _train_synthetic(s: Summary) -> str:
    return (
        f"token F1 {float(s['synthetic_token_f1']):.3f} trained on synthetic notes, "
        f"{float(s['gold_token_f1']):.3f} on real ones"
    )


def _export(s: Summary) -> str:
    said = f"bundle {s['bundle']} signed, {_count(s['artifacts'], 'file')}"
    return said + ("; waits for its release approval" if s.get("awaiting_approval") else "")


KEY_FIGURES: dict[str, Callable[[Summary], str]] = {
    "split": _split,
    "pseudonymise": _pseudonymise,
    "annotator": _annotator,
    "adapt": _adapt,
    "generate": _generate,
    "annotate": _annotate,
    "audit": _audit,
    "train-synthetic": _train_synthetic,
    "export": _export,
}
"""Stage name -> the sentence its closing-table row shows."""


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def plain_figures(summary: Summary) -> str:
    """``key value`` for the summary's plain values; nested ones are left to ``stage.json``."""
    shown = [f"{key.replace('_', ' ')} {value}" for key, value in summary.items() if _plain(value)]
    return ", ".join(shown)


def key_figure(stage: str, summary: Summary) -> str:
    """The stage's sentence, or its plain figures when it has no entry or the entry cannot
    read this record."""
    entry = KEY_FIGURES.get(stage)
    if entry is not None:
        try:
            return entry(summary)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    return plain_figures(summary)
