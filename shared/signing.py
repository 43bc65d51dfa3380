"""Ed25519 signing and verification of export manifests (cryptography)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.atomic import atomic_write_bytes
from shared.errors import VerificationError


def generate_signing_key(private_path: Path, public_path: Path) -> str:
    """Write a new Ed25519 key pair (PEM; private key mode 0600); return the key id."""
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    atomic_write_bytes(private_path, private_pem)
    os.chmod(private_path, 0o600)
    public = key.public_key()
    atomic_write_bytes(
        public_path,
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )
    return key_id(public)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise VerificationError(f"{path}: not an Ed25519 private key; fix: run `site-agent init`")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(path.read_bytes())
    if not isinstance(key, Ed25519PublicKey):
        raise VerificationError(f"{path}: not an Ed25519 public key")
    return key


def derived_secret(key: Ed25519PrivateKey, purpose: str) -> bytes:
    """A site-only key for one ``purpose`` (keyed hashes, seals), derived from the signing
    key: SHA-256 of the purpose, a NUL and the raw private key."""
    raw = key.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    return hashlib.sha256(purpose.encode("utf-8") + b"\0" + raw).digest()


def key_id(public: Ed25519PublicKey) -> str:
    """Short fingerprint: SHA-256 of the raw public key, first 16 hex digits."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def sign(data: bytes, key: Ed25519PrivateKey) -> str:
    return base64.b64encode(key.sign(data)).decode("ascii")


def verify(data: bytes, signature_b64: str, public: Ed25519PublicKey) -> None:
    try:
        public.verify(base64.b64decode(signature_b64), data)
    except (InvalidSignature, ValueError) as exc:
        raise VerificationError(
            "signature does not verify: the manifest was changed after signing or was "
            "signed with another key"
        ) from exc
