"""Keys and certificates of a deployment, and the coordinator's site registry.

- a CA and the SuperLink's TLS certificate (IP and DNS subject alternative names);
- (each site's SuperNode authentication key is made in shared/supernode_keys.py);
- the registry of sites: their Ed25519 export-signing public key (shared/signing.py) and their
  SuperNode auth public key.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from protocol.registry import SiteKeys, SiteRegistry
from shared.atomic import atomic_write_bytes, atomic_write_text
from shared.errors import ConfigError
from shared.signing import key_id, load_public_key
from shared.supernode_keys import write_private_key

VALID_DAYS = 365


@dataclass(frozen=True)
class TlsFiles:
    ca_certificate: Path
    ca_key: Path
    certificate: Path
    key: Path


def _san(hosts: list[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _builder(
    subject: x509.Name, issuer: x509.Name, public: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
    )


def create_tls(out_dir: Path, hosts: list[str], name: str = "deid-synth") -> TlsFiles:
    """A CA and a SuperLink certificate valid for every host in ``hosts`` (IPs or DNS names)."""
    if not hosts:
        raise ConfigError("no host for the SuperLink certificate; fix: pass --host 127.0.0.1")
    files = TlsFiles(
        out_dir / "ca.crt", out_dir / "ca.key", out_dir / "superlink.crt", out_dir / "superlink.key"
    )
    ca_key = ec.generate_private_key(ec.SECP384R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP384R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    server = (
        _builder(subject, ca_name, server_key.public_key())
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    write_private_key(files.ca_key, ca_key, serialization.PrivateFormat.PKCS8)
    write_private_key(files.key, server_key, serialization.PrivateFormat.PKCS8)
    atomic_write_bytes(files.ca_certificate, ca.public_bytes(serialization.Encoding.PEM))
    atomic_write_bytes(files.certificate, server.public_bytes(serialization.Encoding.PEM))
    return files


def load_registry(path: Path) -> SiteRegistry:
    if not path.exists():
        return SiteRegistry()
    return SiteRegistry.model_validate_json(path.read_text(encoding="utf-8"))


def register_site(
    registry_path: Path, site_id: str, signing_public_key: Path, auth_public_key: Path | None = None
) -> SiteKeys:
    """Add or replace ``site_id`` in the registry with its signing (and SuperNode) public keys."""
    public = load_public_key(signing_public_key)
    auth = auth_public_key.read_text(encoding="utf-8").strip() if auth_public_key else None
    if auth is not None and not auth.startswith("ecdsa-sha2-nistp"):
        raise ConfigError(
            f"{auth_public_key}: not an OpenSSH ECDSA public key; fix: use the .pub file that "
            "`site-agent auth-key` wrote"
        )
    entry = SiteKeys(
        site_id=site_id,
        signing_public_key_pem=signing_public_key.read_text(encoding="utf-8"),
        signing_key_id=key_id(public),
        auth_public_key_openssh=auth,
    )
    registry = load_registry(registry_path)
    updated = SiteRegistry(sites={**registry.sites, site_id: entry})
    atomic_write_text(registry_path, updated.model_dump_json(indent=2))
    return entry
