"""Private keys written by either side: a site's SuperNode auth key, the deployment's TLS keys.

A SuperNode authentication key is ECDSA P-384 in OpenSSH format, which is what
``flower-supernode --auth-supernode-private-key`` loads and ``flwr supernode register`` takes.
A site makes its own (``site-agent auth-key``); ``site-agent demo-sites`` makes the demo's.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from shared.atomic import atomic_write_bytes


def write_private_key(
    path: Path, key: ec.EllipticCurvePrivateKey, fmt: serialization.PrivateFormat
) -> None:
    """``key`` as unencrypted PEM/OpenSSH, readable by its owner only."""
    data = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())
    atomic_write_bytes(path, data)
    os.chmod(path, 0o600)


def create_supernode_auth_key(private_path: Path) -> Path:
    """An ECDSA P-384 key pair in OpenSSH format; returns the ``.pub`` path beside it."""
    key = ec.generate_private_key(ec.SECP384R1())
    write_private_key(private_path, key, serialization.PrivateFormat.OpenSSH)
    public_path = private_path.with_name(private_path.name + ".pub")
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    atomic_write_bytes(public_path, public + b"\n")
    return public_path
