"""A site's export bundle once the collect phase has verified it: what the later phases use.

It sits below the phases and :class:`coordinator.run_state.RunState`, which holds the accepted
bundles: ``collect`` makes them (``collect/verify.py``), ``aggregate`` trains on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flwr.app import ArrayRecord

from protocol import Corpus
from protocol.audit import AuditReport
from protocol.export import ExportManifest
from protocol.rounds import AcceptedBundle


@dataclass
class VerifiedBundle:
    """A bundle that passed every check, with its corpus parsed."""

    manifest: ExportManifest
    accepted: AcceptedBundle
    corpus: Corpus | None
    weights: dict[str, tuple[ArrayRecord, bytes]]
    files: dict[str, bytes] = field(default_factory=dict)
    audit: AuditReport | None = None  # the verified audit report (its figures go on model cards)
