"""Certificates, SuperNode keys, registry, settings and configs: what Flower and sites need."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_ssh_private_key, load_ssh_public_key

from coordinator.deployment.config_file import load_coordinator_config
from coordinator.deployment.keys import create_tls, load_registry, register_site
from coordinator.settings import FederationSettings
from shared.errors import ConfigError
from shared.signing import generate_signing_key
from shared.supernode_keys import create_supernode_auth_key
from site_agent.federation.join import join_argv, load_join_config


def test_superlink_certificate_has_ip_and_dns_sans_and_chains_to_the_ca(tmp_path: Path) -> None:
    files = create_tls(tmp_path, ["127.0.0.1", "superlink.example.org"])
    ca = x509.load_pem_x509_certificate(files.ca_certificate.read_bytes())
    cert = x509.load_pem_x509_certificate(files.certificate.read_bytes())
    cert.verify_directly_issued_by(ca)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert san.get_values_for_type(x509.DNSName) == ["superlink.example.org"]
    assert oct(files.key.stat().st_mode)[-3:] == "600"


def test_supernode_auth_key_is_what_flower_loads(tmp_path: Path) -> None:
    public = create_supernode_auth_key(tmp_path / "node.key")
    private = load_ssh_private_key((tmp_path / "node.key").read_bytes(), None)
    assert isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp384r1"
    assert isinstance(load_ssh_public_key(public.read_bytes()), ec.EllipticCurvePublicKey)


def test_register_site_records_both_keys_and_rejects_a_wrong_auth_key(tmp_path: Path) -> None:
    key_id = generate_signing_key(tmp_path / "sign", tmp_path / "sign.pub")
    auth = create_supernode_auth_key(tmp_path / "node.key")
    register_site(tmp_path / "r.json", "s1", tmp_path / "sign.pub", auth)
    entry = load_registry(tmp_path / "r.json").sites["s1"]
    assert entry.signing_key_id == key_id and entry.auth_public_key_openssh.startswith("ecdsa")  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="OpenSSH ECDSA"):
        register_site(tmp_path / "r.json", "s2", tmp_path / "sign.pub", tmp_path / "sign.pub")


def test_settings_name_the_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        FederationSettings.from_run_config(
            {
                "registry": str(tmp_path / "nope.json"),
                "base-model": str(tmp_path),
                "output-dir": "o",
            }
        )
    assert "registry = " in str(info.value) and "does not exist" in str(info.value)


def test_settings_round_trip_through_the_run_config(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}")
    settings = FederationSettings(
        registry=tmp_path / "r.json", base_model=tmp_path, output_dir=tmp_path
    )
    assert FederationSettings.from_run_config(settings.to_run_config()) == settings


def test_coordinator_toml_resolves_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}")
    (tmp_path / "coordinator.toml").write_text(
        '[superlink]\naddress = "10.0.0.1:9093"\nroot-certificates = "ca.crt"\n'
        '[federation]\nregistry = "r.json"\nbase-model = "."\noutput-dir = "out"\n'
        "fedavg-rounds = 3\n"
    )
    link, settings = load_coordinator_config(tmp_path / "coordinator.toml")
    assert link.root_certificates == tmp_path / "ca.crt"
    assert settings.registry == tmp_path / "r.json" and settings.fedavg_rounds == 3


def test_join_builds_the_supernode_command_with_tls_and_auth(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_text(
        '[site]\nname = "ignored by join"\n[federation]\nsite-id = "site-a"\nwork-dir = "w"\n'
        'auth-private-key = "keys/node.key"\nroot-certificates = "ca.crt"\n'
    )
    config = load_join_config(tmp_path / "site.toml")
    argv = join_argv(config, "10.0.0.1:9093", insecure=False)
    assert argv[argv.index("--auth-supernode-private-key") + 1] == str(tmp_path / "keys/node.key")
    site = f'site-id="site-a" site-dir="{tmp_path / "w"}"'
    policy = f'site-config="{(tmp_path / "site.toml").resolve()}"'  # [federation.evaluation]
    assert argv[argv.index("--node-config") + 1] == f"{site} {policy}"
    config_without_keys = config.model_copy(update={"auth_private_key": None})
    with pytest.raises(ConfigError, match="auth-private-key"):
        join_argv(config_without_keys, "10.0.0.1:9093", insecure=False)


def test_join_signs_the_collect_nonce_with_the_sites_signing_key(tmp_path: Path) -> None:
    """site.toml's top-level ``signing_key`` reaches the ClientApp as ``signing-key`` (the
    collect nonce is signed with it); ``[federation] signing-key`` overrides it."""
    base = '[federation]\nsite-id = "site-a"\nwork-dir = "w"\n'
    (tmp_path / "site.toml").write_text('signing_key = "keys/site.key"\n' + base)
    config = load_join_config(tmp_path / "site.toml")
    assert f'signing-key="{tmp_path / "keys/site.key"}"' in config.node_config()
    (tmp_path / "site.toml").write_text(
        'signing_key = "keys/site.key"\n' + base + 'signing-key = "other.key"\n'
    )
    config = load_join_config(tmp_path / "site.toml")
    assert f'signing-key="{tmp_path / "other.key"}"' in config.node_config()


def test_runtime_port_zero_joins_on_a_free_local_port(tmp_path: Path) -> None:
    import socket

    (tmp_path / "site.toml").write_text(
        '[federation]\nsite-id = "site-a"\nwork-dir = "w"\nruntime-port = 0\n'
    )
    argv = join_argv(load_join_config(tmp_path / "site.toml"), "127.0.0.1:9093", insecure=True)
    port = int(argv[argv.index("--port") + 1])
    assert port > 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))  # nothing listens there
    (tmp_path / "site.toml").write_text(
        '[federation]\nsite-id = "site-a"\nwork-dir = "w"\nruntime-port = -1\n'
    )
    with pytest.raises(ConfigError, match="runtime-port"):
        load_join_config(tmp_path / "site.toml")


def test_a_site_without_a_supernode_key_is_named_not_skipped_silently(tmp_path: Path) -> None:
    from coordinator.deployment.remote import register_sites

    generate_signing_key(tmp_path / "sign", tmp_path / "sign.pub")
    register_site(tmp_path / "r.json", "site-x", tmp_path / "sign.pub")
    settings = FederationSettings(
        registry=tmp_path / "r.json", base_model=tmp_path, output_dir=tmp_path
    )
    lines: list[str] = []
    assert register_sites({}, settings, tmp_path, lines.append) == {}
    assert lines and "site-x" in lines[0] and "not registered" in lines[0] and "fix:" in lines[0]


def test_coordinator_toml_refuses_insecure_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "coordinator.toml").write_text('[superlink]\naddress = "a:1"\ninsecure = true\n')
    with pytest.raises(ConfigError, match="--insecure"):
        load_coordinator_config(tmp_path / "coordinator.toml")


def test_every_run_config_key_is_declared_for_flower() -> None:
    """``flwr run`` refuses a run-config key its app does not declare in pyproject.toml, so
    every FederationSettings field (the reply caps included) has its key there."""
    import tomllib

    from coordinator.settings import FederationSettings

    root = Path(__file__).resolve().parents[3]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    fields = {name.replace("_", "-") for name in FederationSettings.model_fields}
    assert set(declared) == fields
    defaults = FederationSettings.model_fields
    for name in ("max-documents", "max-update-norm-ratio", "max-reply-bytes"):
        assert declared[name] == defaults[name.replace("-", "_")].default
