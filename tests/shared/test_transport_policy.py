"""The transport policy of ``coordinator run`` and ``site-agent join``: address x flags x CA."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import ConfigError, ToolkitError, UsageError
from shared.transport_policy import Transport, address_host, choose_transport, is_loopback

CA, MISSING_CA, NO_CA = "ca", "missing", None

# address, insecure, allow-insecure-remote, root certificates -> connection or (error, words)
CASES = [
    ("10.0.0.1:9093", False, False, CA, "tls"),
    ("superlink.example.org:443", False, False, CA, "tls"),
    ("127.0.0.1:9093", False, False, CA, "tls"),
    ("10.0.0.1:9093", False, False, NO_CA, (ConfigError, "no root certificates")),
    ("127.0.0.1:9093", False, False, NO_CA, (ConfigError, "--insecure")),
    ("10.0.0.1:9093", False, True, NO_CA, (ConfigError, "TLS is required")),
    ("10.0.0.1:9093", False, False, MISSING_CA, (ConfigError, "is not a file")),
    ("127.0.0.1:9093", True, False, NO_CA, "insecure"),
    ("127.8.9.10:9093", True, False, NO_CA, "insecure"),
    ("localhost:9093", True, False, NO_CA, "insecure"),
    ("LOCALHOST.:9093", True, False, NO_CA, "insecure"),
    ("[::1]:9093", True, False, NO_CA, "insecure"),
    ("[::ffff:127.0.0.1]:9093", True, False, NO_CA, "insecure"),
    ("127.0.0.1:9093", True, False, CA, "insecure"),  # the explicit flag wins over the CA
    ("10.0.0.1:9093", True, False, NO_CA, (UsageError, "--allow-insecure-remote")),
    ("10.0.0.1:9093", True, False, CA, (UsageError, "not a loopback address")),
    ("0.0.0.0:9093", True, False, NO_CA, (UsageError, "not a loopback address")),
    ("[::]:9093", True, False, NO_CA, (UsageError, "not a loopback address")),
    ("128.0.0.1:9093", True, False, NO_CA, (UsageError, "not a loopback address")),
    ("localhost.example.org:9093", True, False, NO_CA, (UsageError, "not a loopback")),
    ("127.0.0.1.nip.io:9093", True, False, NO_CA, (UsageError, "not a loopback")),
    ("[::2]:9093", True, False, NO_CA, (UsageError, "not a loopback address")),
    ("10.0.0.1:9093", True, True, NO_CA, "insecure"),
    ("superlink.example.org:443", True, True, NO_CA, "insecure"),
    ("10.0.0.1", False, False, CA, (UsageError, "not HOST:PORT")),
    ("127.0.0.1", True, False, NO_CA, (UsageError, "not HOST:PORT")),
    (":9093", False, False, CA, (UsageError, "not HOST:PORT")),
    ("10.0.0.1:0", False, False, CA, (UsageError, "not HOST:PORT")),
    ("10.0.0.1:70000", False, False, CA, (UsageError, "not HOST:PORT")),
    ("[::1]9093", True, False, NO_CA, (UsageError, "not HOST:PORT")),
]


@pytest.fixture
def ca_file(tmp_path: Path) -> Path:
    path = tmp_path / "ca.crt"
    path.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("address", "insecure", "allow_remote", "ca", "expected"), CASES)
def test_transport_policy(
    address: str,
    insecure: bool,
    allow_remote: bool,
    ca: str | None,
    expected: str | tuple[type[ToolkitError], str],
    ca_file: Path,
) -> None:
    certificates = {CA: ca_file, MISSING_CA: ca_file.parent / "nope.crt", NO_CA: None}[ca]

    def choose() -> Transport:
        return choose_transport(
            address,
            certificates,
            insecure=insecure,
            allow_insecure_remote=allow_remote,
            ca_fix="set root-certificates",
        )

    if isinstance(expected, tuple):
        error, words = expected
        with pytest.raises(error) as info:
            choose()
        assert words in str(info.value)
        assert "fix:" in str(info.value)
        return
    transport = choose()
    assert transport.address == address
    if expected == "tls":
        assert transport.secure and transport.root_certificates == ca_file.resolve()
        assert "TLS" in transport.describe("auth on") and "INSECURE" not in transport.describe("")
    else:
        assert not transport.secure and transport.root_certificates is None
        assert transport.describe("auth off").startswith("transport: INSECURE")


def test_refusals_name_the_fix_the_command_gave(ca_file: Path) -> None:
    with pytest.raises(ConfigError) as info:
        choose_transport(
            "10.0.0.1:9093", None, insecure=False, allow_insecure_remote=False, ca_fix="FIX-HERE"
        )
    assert "fix: FIX-HERE" in str(info.value)


@pytest.mark.parametrize(
    ("address", "host"),
    [("a.example:1", "a.example"), ("[::1]:9093", "::1"), ("127.0.0.1:9093", "127.0.0.1")],
)
def test_address_host(address: str, host: str) -> None:
    assert address_host(address) == host


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("localhost", True),
        ("10.0.0.1", False),
        ("::", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
