"""Which connection to a SuperLink a command may open: TLS by default, plain text only on request.

``coordinator run`` and ``site-agent join`` both decide here. Without TLS, model weights and
site bundles cross the wire in clear text and SuperNode authentication cannot be on, so

- TLS needs root certificates (the coordinator's CA) that exist;
- no TLS only with an explicit ``--insecure``, and only to a loopback address
  (127.0.0.0/8, ::1, localhost) unless ``--allow-insecure-remote`` says so as well.

Host names other than ``localhost`` are not resolved: a name is remote whatever it resolves to.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ConfigError, UsageError

LOOPBACK = "127.0.0.0/8, ::1, localhost"


@dataclass(frozen=True)
class Transport:
    """The connection a command opens; ``root_certificates`` is None for an insecure one."""

    address: str
    root_certificates: Path | None

    @property
    def secure(self) -> bool:
        return self.root_certificates is not None

    def describe(self, auth: str) -> str:
        """One line for the operator: what protects this connection."""
        if self.root_certificates is None:
            return f"transport: INSECURE (no TLS) to {self.address}; {auth}"
        return (
            f"transport: TLS to {self.address} (root certificates {self.root_certificates}); {auth}"
        )


def address_host(address: str) -> str:
    """The host of ``HOST:PORT`` or ``[IPv6]:PORT``."""
    host, port = address, ""
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else ""
    elif ":" in address:
        host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(
            f"SuperLink address {address!r} is not HOST:PORT; allowed: a name or IP and a port "
            "1-65535 ([::1]:9093 for IPv6); fix: e.g. superlink.example.org:9093"
        )
    return host


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and the name localhost."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def choose_transport(
    address: str,
    root_certificates: Path | None,
    *,
    insecure: bool,
    allow_insecure_remote: bool,
    ca_fix: str,
) -> Transport:
    """TLS with ``root_certificates``, or an insecure connection the operator asked for.

    ``ca_fix`` says where this command takes its root certificates from (for the messages).
    """
    host = address_host(address)
    if insecure:
        if not is_loopback(host) and not allow_insecure_remote:
            raise UsageError(
                f"--insecure refused for {address}: {host} is not a loopback address, and without "
                "TLS model weights and bundles cross the network in clear text with no SuperNode "
                f"authentication; allowed without TLS: {LOOPBACK}; fix: use TLS ({ca_fix}) or, "
                "if the network to that host is trusted, add --allow-insecure-remote"
            )
        return Transport(address, None)
    if root_certificates is None:
        raise ConfigError(
            f"no root certificates for the SuperLink at {address}; TLS is required unless "
            f"--insecure is given; fix: {ca_fix} (or --insecure for a test on {LOOPBACK})"
        )
    if not root_certificates.is_file():
        raise ConfigError(
            f"root certificates {root_certificates} is not a file; allowed: the coordinator's "
            "CA certificate in PEM (ca.crt from `coordinator keys tls`); fix: check the path"
        )
    return Transport(address, root_certificates.resolve())  # Flower wants an absolute path
