"""A collect reply bound to one run: the coordinator's nonce, signed by the site.

A bundle's manifest is signed once, when the site exports; signed bytes can be sent again.
The coordinator's collect instruction carries a fresh random nonce
(:class:`protocol.rounds.CollectInstruction`); the site signs the nonce together with the
SHA-256 of the manifest it sends (:func:`sign_collect_reply`), and the coordinator checks that
signature with the site's registered key (:func:`reply_is_fresh`). A reply recorded in
an earlier run, or a bundle sent on by anyone but its signer, does not carry a signature over
this run's nonce and is refused.
"""

from __future__ import annotations

import secrets

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.errors import VerificationError
from shared.provenance import sha256_bytes
from shared.signing import sign, verify

REPLY_SIGNATURE = "collect-reply.sig"  # key of the signature in the collect reply's files
_DOMAIN = b"deid-synth collect reply v1\0"  # never valid JSON: no confusion with a manifest
MAX_SIGNATURE_CHARS = 200


def new_nonce() -> str:
    """128 random bits as hex, one per collect phase."""
    return secrets.token_hex(16)


def collect_statement(nonce: str, manifest: bytes) -> bytes:
    """What the site signs: the domain tag, this run's nonce, the manifest's SHA-256."""
    return _DOMAIN + nonce.encode("ascii") + b"\0" + sha256_bytes(manifest).encode("ascii")


def sign_collect_reply(nonce: str, manifest: bytes, key: Ed25519PrivateKey) -> str:
    return sign(collect_statement(nonce, manifest), key)


def reply_is_fresh(
    nonce: str, manifest: bytes, signature: object, public: Ed25519PublicKey
) -> bool:
    """True when ``signature`` is the site's signature over this run's ``nonce``."""
    if not isinstance(signature, str) or len(signature) > MAX_SIGNATURE_CHARS:
        return False
    try:
        verify(collect_statement(nonce, manifest), signature.strip(), public)
    except VerificationError:
        return False
    return True
