"""The audit stage's seal: only ``audit.json`` files this site's pipeline wrote can clear export.

The export gate re-derives everything it can from the site's files and policy, but the
figures inside ``audit.json`` (n-gram recall, the dropped-document list) would take a new
audit to recompute. So the audit stage seals the report: an HMAC-SHA256 over the exact
report bytes and the audited corpus's SHA-256, keyed by a key derived from the site's signing
key (which never leaves the site). A hand-edited report, a report from ``site-agent audit``
(an inspection tool, never sealed) or one copied from another site fails the seal.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

from shared.atomic import atomic_write_text
from shared.signing import derived_secret, load_private_key

SEAL_FILE = "audit.seal"
SEAL_PURPOSE = "deid-synth audit seal v1"


def seal_key(signing_key: Path) -> bytes:
    """The site's sealing key, derived from its Ed25519 signing key."""
    return derived_secret(load_private_key(signing_key), SEAL_PURPOSE)


def _mac(report_bytes: bytes, corpus_sha256: str, key: bytes) -> str:
    message = corpus_sha256.encode("ascii") + b"\0" + report_bytes
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def write_seal(report_path: Path, corpus_sha256: str, key: bytes) -> Path:
    """Write ``audit.seal`` beside ``report_path`` over its bytes and the audited corpus."""
    mac = _mac(report_path.read_bytes(), corpus_sha256, key)
    path = report_path.with_name(SEAL_FILE)
    atomic_write_text(
        path, json.dumps({"hmac_sha256": mac, "audited_corpus_sha256": corpus_sha256})
    )
    return path


def seal_holds(report_path: Path, corpus_sha256: str, key: bytes) -> bool:
    """True when ``audit.seal`` beside the report was written by this site over these bytes."""
    path = report_path.with_name(SEAL_FILE)
    try:
        claimed = json.loads(path.read_text(encoding="utf-8"))["hmac_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    expected = _mac(report_path.read_bytes(), corpus_sha256, key)
    return isinstance(claimed, str) and hmac.compare_digest(claimed, expected)
