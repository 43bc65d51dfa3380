"""A RunState without a run: settings over placeholder files, sites answering the roll call."""

from __future__ import annotations

from pathlib import Path

from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from protocol import LabelMapping
from protocol.registry import SiteRegistry
from protocol.rounds import RollCallReply, TestSplitSize


def run_state(
    tmp_path: Path, sites: dict[int, str], mapping: LabelMapping | None = None
) -> RunState:
    (tmp_path / "registry.json").write_text("{}", encoding="utf-8")
    (tmp_path / "base").mkdir(exist_ok=True)
    settings = FederationSettings(
        registry=tmp_path / "registry.json", base_model=tmp_path / "base", output_dir=tmp_path
    )
    state = RunState(settings=settings, registry=SiteRegistry(), mapping=mapping)
    for node, site in sites.items():
        state.sites[node] = RollCallReply(
            site_id=site,
            labels=("PER",),
            manifest=None,
            test_split=TestSplitSize(n_documents=10, n_spans=10, n_characters=100),
            has_baseline=True,
        )
        state.roll[site] = state.sites[node]
    return state
