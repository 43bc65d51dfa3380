"""What the coordinator knows as a run goes on: active sites, accepted bundles, exclusions."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from coordinator import log_safety
from coordinator.messaging import Reply
from coordinator.settings import FederationSettings
from coordinator.verified_bundle import VerifiedBundle
from protocol import LabelMapping
from protocol.registry import SiteRegistry
from protocol.rounds import (
    CorpusOverlap,
    Exclusion,
    ExclusionReason,
    FedAvgRound,
    Phase,
    PrivacySpend,
    RollCallReply,
)

log = logging.getLogger("flwr")


@dataclass
class RunState:
    settings: FederationSettings
    registry: SiteRegistry
    mapping: LabelMapping | None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sites: dict[int, RollCallReply] = field(default_factory=dict)
    bundles: dict[str, VerifiedBundle] = field(default_factory=dict)
    exclusions: list[Exclusion] = field(default_factory=list)
    roll: dict[str, RollCallReply] = field(default_factory=dict)
    fedavg_rounds: list[FedAvgRound] = field(default_factory=list)
    evaluation_bounds: dict[str, str] = field(default_factory=dict)  # site -> its stated bound
    privacy: dict[str, PrivacySpend] = field(default_factory=dict)  # site -> its last spend
    corpus_overlaps: list[CorpusOverlap] = field(default_factory=list)  # copied corpora

    def __post_init__(self) -> None:
        log_safety.install(log)  # site ids, labels and reasons in log lines stay one line

    def site_of(self, node: int) -> str:
        return self.sites[node].site_id

    def exclude(
        self, site_id: str, phase: Phase, reason: ExclusionReason, detail: str = ""
    ) -> None:
        self.exclusions.append(
            Exclusion(site_id=site_id, phase=phase, reason=reason, detail=detail)
        )
        log.warning("  excluded %s in %s: %s %s", site_id, phase, reason, detail)

    def note_failure(self, reply: Reply, phase: Phase, label: str) -> None:
        """Record a failed reply; a site that stopped answering is dropped from later phases."""
        if reply.error == "no_reply":
            self.exclude(label, phase, "no_reply", "no answer before the reply timeout")
            self.sites.pop(reply.node_id, None)
        else:
            self.exclude(label, phase, "site_error", reply.error or "")
