"""Phase 2, collect: every site sends its signed export bundle; each one is verified."""

from __future__ import annotations

import logging

from flwr.app import RecordDict
from flwr.serverapp import Grid

from coordinator.collect.verify import BundleRejected, ReceivedBundle, verify_received_bundle
from coordinator.messaging import exchange
from coordinator.run_state import RunState
from protocol.export import MANIFEST, SIGNATURE
from shared import wire

log = logging.getLogger("flwr")


def unpack_received(content: RecordDict) -> ReceivedBundle:
    """The bundle a site sent, as bytes and arrays (no checks yet)."""
    files = content.config_records[wire.BUNDLE]
    manifest, signature = files.get(MANIFEST), files.get(SIGNATURE)
    if not isinstance(manifest, bytes) or not isinstance(signature, str):
        raise BundleRejected("malformed_bundle", "manifest or signature missing")
    bundle = ReceivedBundle(manifest_bytes=manifest, signature=signature)
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
    nodes = {n: RecordDict() for n in state.sites}
    replies = exchange(grid, nodes, wire.COLLECT, "collect", state.settings.reply_timeout)
    for node, reply in sorted(replies.items(), key=lambda item: state.site_of(item[0])):
        site = state.site_of(node)
        if reply.content is None:
            state.note_failure(reply, "collect", site)
            continue
        try:
            verified = verify_received_bundle(unpack_received(reply.content), site, state.registry)
        except BundleRejected as rejected:
            state.exclude(site, "collect", rejected.reason, rejected.detail)
            continue
        state.bundles[site] = verified
        log.info(
            "  %s: bundle accepted (%d synthetic documents, manifest %s)",
            site,
            verified.accepted.n_documents,
            verified.accepted.manifest_sha256[:12],
        )
