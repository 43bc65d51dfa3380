"""demo-sites reports each site's stages as they pass, read from the logs it names."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from site_agent.demo import sites
from site_agent.demo.follow import LogFollower, stage_event


def pipeline_lines(stages: list[tuple[int, str, bool]]) -> bytes:
    """What ``site-agent synthesize`` prints per stage into a redirected log (rich, no TTY)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=False)
    for index, name, skipped in stages:
        if skipped:
            console.print(f"[dim]= {name}: unchanged, skipped[/]")
        else:
            console.rule(f"[bold]{index:02d} {name}[/] what it does")
            console.print("progress annotator training: 3/9 (33%), 4s elapsed")
    return buffer.getvalue().encode()


@pytest.mark.parametrize(
    ("line", "event"),
    [
        ("──────── 03 pseudonymise surrogates for PII ────────", "03 pseudonymise started"),
        ("── 08 train-synthetic ──", "08 train-synthetic started"),
        ("= adapt: unchanged, skipped", "adapt skipped (unchanged)"),
        ("progress annotator training: 3/9 (33%)", None),
        ("2024 patients were seen", None),
    ],
)
def test_stage_events_are_read_from_pipeline_lines(line: str, event: str | None) -> None:
    assert stage_event(line) == event


def test_follower_reports_complete_lines_once_per_site(tmp_path: Path) -> None:
    logs = {"site-a": tmp_path / "a.log", "site-b": tmp_path / "b.log"}
    seen: list[str] = []
    follower = LogFollower(logs, seen.append)
    follower.poll()  # no log yet: nothing, no error
    data = pipeline_lines([(1, "split", False), (2, "pseudonymise", True), (3, "adapt", False)])
    cut = data.index(b"adapt") + 2  # the last rule arrives in two writes
    logs["site-a"].write_bytes(data[:cut])
    follower.poll()
    assert seen == ["  site-a: 01 split started", "  site-a: pseudonymise skipped (unchanged)"]
    with logs["site-a"].open("ab") as log:
        log.write(data[cut:])
    logs["site-b"].write_bytes(pipeline_lines([(1, "split", False)]))
    follower.poll()
    follower.poll()
    assert seen[2:] == ["  site-a: 03 adapt started", "  site-b: 01 split started"]


def test_run_site_pipelines_names_the_logs_and_prints_each_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = []
    for site in ("site-a", "site-b"):
        (tmp_path / site).mkdir()
        configs.append(tmp_path / site / "site.toml")
    sites.site_log(configs[0]).write_text("── 09 export stale line of an old run ──\n")

    def fake_synthesize(config: Path) -> tuple[Path, float, int]:
        stages = [(1, "split", False), (2, "pseudonymise", False), (9, "export", False)]
        sites.site_log(config).write_bytes(pipeline_lines(stages))
        return config, 1.0, 0

    monkeypatch.setattr(sites, "synthesize", fake_synthesize)
    lines: list[str] = []
    sites.run_site_pipelines(configs, 2, lines.append)
    for config in configs:
        site = config.parent.name
        assert f"  {site}: log in {config.parent / 'synthesize.log'}" in lines
        mine = [line for line in lines if line.startswith(f"  {site}: ")]
        assert mine[1:] == [
            f"  {site}: 01 split started",
            f"  {site}: 02 pseudonymise started",
            f"  {site}: 09 export started",
            f"  {site}: site-agent synthesize done in 1 s",
        ]
