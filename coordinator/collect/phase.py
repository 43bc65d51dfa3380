"""Phase 2, collect: every site sends its signed export bundle; each one is verified.

The collect instruction carries a fresh nonce; a site signs it with its bundle, so that a
reply recorded in another run is refused. Each reply is read as untrusted input: whatever it
raises excludes that site with a named reason and the phase goes on. Copied corpora are found
last (``coordinator/collect/duplicates.py``): a copy of another site's documents excludes the
later bundle (``duplicate_corpus``), and near-duplicates are flagged in the report.
"""

from __future__ import annotations

import logging

from flwr.app import RecordDict
from flwr.serverapp import Grid

from coordinator.collect.duplicates import exclude_copied_corpora
from coordinator.collect.verify import BundleRejected, ReceivedBundle, verify_received_bundle
from coordinator.messaging import exchange
from coordinator.replies import refusal
from coordinator.run_state import RunState
from protocol.export import MANIFEST, SIGNATURE
from protocol.rounds import CollectInstruction
from shared import wire
from shared.bundle_limits import DEFAULT_LIMITS, BundleLimits
from shared.freshness import REPLY_SIGNATURE, new_nonce

log = logging.getLogger("flwr")


def unpack_received(content: RecordDict, limits: BundleLimits = DEFAULT_LIMITS) -> ReceivedBundle:
    """The bundle a site sent, as bytes and arrays (no checks beyond counts yet)."""
    files = content.config_records.get(wire.BUNDLE)
    if files is None:
        raise BundleRejected("malformed_bundle", "the reply holds no bundle record")
    if len(files) > 2 * limits.max_files + 3 or len(content.array_records) > limits.max_files:
        raise BundleRejected("over_limit", f"more than {limits.max_files} files sent")
    manifest, signature = files.get(MANIFEST), files.get(SIGNATURE)
    if not isinstance(manifest, bytes) or not isinstance(signature, str):
        raise BundleRejected("malformed_bundle", "manifest or signature missing")
    reply_signature = files.get(REPLY_SIGNATURE)
    bundle = ReceivedBundle(
        manifest_bytes=manifest,
        signature=signature,
        reply_signature=reply_signature if isinstance(reply_signature, str) else None,
    )
    for key, value in files.items():
        if key.startswith(wire.FILE_PREFIX) and isinstance(value, bytes):
            bundle.files[key.removeprefix(wire.FILE_PREFIX)] = value
        elif key.startswith(wire.HEADER_PREFIX) and isinstance(value, bytes):
            name = key.removeprefix(wire.HEADER_PREFIX)
            record = content.array_records.get(wire.WEIGHTS_PREFIX + name)
            if record is None:
                raise BundleRejected("missing_artifact", f"weights of {name!r} not sent")
            bundle.weights[name] = (record, value)
    return bundle


def collect(grid: Grid, state: RunState) -> None:
    nonce = new_nonce()
    content = wire.pack(CollectInstruction(nonce=nonce))
    nodes = dict.fromkeys(state.sites, content)
    replies = exchange(grid, nodes, wire.COLLECT, "collect", state.settings.reply_timeout)
    limits = state.settings.limits
    for node, reply in sorted(replies.items(), key=lambda item: state.site_of(item[0])):
        site = state.site_of(node)
        if reply.content is None:
            state.note_failure(reply, "collect", site)
            continue
        try:
            received = unpack_received(reply.content, limits)
            verified = verify_received_bundle(
                received, site, state.registry, limits=limits, nonce=nonce
            )
        except Exception as exc:  # one site's reply never ends the phase
            state.exclude(site, "collect", *refusal(exc))
            continue
        state.bundles[site] = verified
        log.info(
            "  %s: bundle accepted (%d synthetic documents, manifest %s)",
            site,
            verified.accepted.n_documents,
            verified.accepted.manifest_sha256[:12],
        )
    exclude_copied_corpora(state)
