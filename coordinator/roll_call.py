"""Phase 1, roll call: who is here, what labels they use, what they exported, test sizes.

A reply is untrusted: its payload is capped before it is parsed, its site id must match
``SITE_ID_PATTERN`` (the type says so), and whatever reading it raises excludes that node.
"""

from __future__ import annotations

import logging
import time

from flwr.app import RecordDict
from flwr.serverapp import Grid

from coordinator.identity import identity_problem, load_bindings
from coordinator.messaging import exchange
from coordinator.replies import refusal, unpack_reply
from coordinator.run_state import RunState
from protocol.rounds import RollCallReply
from shared import wire

log = logging.getLogger("flwr")


def wait_for_nodes(grid: Grid, minimum: int, expected: int, patience: float) -> list[int]:
    """Node ids once ``expected`` (or, after ``patience`` seconds, ``minimum``) are connected."""
    deadline = time.monotonic() + patience
    while True:
        nodes = sorted(grid.get_node_ids())
        if (expected and len(nodes) >= expected) or (not expected and len(nodes) >= minimum):
            return nodes
        if time.monotonic() >= deadline:
            return nodes
        time.sleep(0.5)


def roll_call(grid: Grid, state: RunState) -> None:
    settings = state.settings
    nodes = wait_for_nodes(
        grid, settings.min_sites, settings.expected_sites, settings.wait_for_sites
    )
    log.info("  %d SuperNode(s) connected", len(nodes))
    replies = exchange(
        grid, {n: RecordDict() for n in nodes}, wire.ROLL_CALL, "roll_call", settings.reply_timeout
    )
    bindings = load_bindings(settings.node_bindings)
    for node, reply in sorted(replies.items()):
        if reply.content is None:
            state.note_failure(reply, "roll_call", f"node-{node}")
            continue
        try:
            answer = unpack_reply(reply.content, RollCallReply, settings.limits)
        except Exception as exc:  # one node's reply never ends the phase
            state.exclude(f"node-{node}", "roll_call", *refusal(exc))
            continue
        problem = identity_problem(node, answer.site_id, bindings)
        if problem is not None:
            owner = bindings.site_of(node) if bindings else None
            if owner is None:
                state.exclude(f"node-{node}", "roll_call", "unbound_node", problem)
            else:
                state.exclude(owner, "roll_call", "identity_mismatch", problem)
            continue
        if answer.site_id in state.roll:
            state.exclude(answer.site_id, "roll_call", "duplicate_site", f"node {node}")
            continue
        state.sites[node] = answer
        state.roll[answer.site_id] = answer
        log.info(
            "  %s: %d test documents, labels %s, export %s",
            answer.site_id,
            answer.test_split.n_documents,
            ",".join(answer.labels),
            "yes" if answer.manifest else "none",
        )
