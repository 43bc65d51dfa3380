"""``[export] require_approval``: ``approve_bundle`` signs who approved which files into the
manifest; the coordinator's verifier accepts that approval, refuses a tampered one, and its
report shows who approved."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from coordinator.collect.phase import unpack_received
from coordinator.collect.verify import BundleRejected, verify_received_bundle
from coordinator.deployment.keys import load_registry, register_site
from coordinator.report.tables import approval_cell
from protocol.export import bundle_content_sha256
from shared.errors import UsageError, VerificationError
from shared.signing import load_private_key, sign
from site_agent.export.approval import approve_bundle, waiting_bundle
from site_agent.federation.bundle import pack_bundle
from tests.bundles import SiteKeys, good_bundle, raw_received, site_keys

WHEN = datetime(2026, 11, 28, 14, 5, tzinfo=UTC)


@pytest.fixture
def waiting(tmp_path: Path) -> tuple[Path, SiteKeys, Path]:
    """(a signed bundle waiting for approval, the site's keys, the coordinator's registry)."""
    keys = site_keys(tmp_path)
    built = good_bundle(tmp_path, "s1", keys, n_documents=3)
    pending = tmp_path / "09-export" / "awaiting-approval" / built.name
    pending.parent.mkdir(parents=True)
    built.rename(pending)
    register_site(tmp_path / "registry.json", "s1", keys.public)
    return pending, keys, tmp_path / "registry.json"


def test_an_approved_bundle_is_accepted_and_the_report_names_the_reviewer(
    tmp_path: Path, waiting: tuple[Path, SiteKeys, Path]
) -> None:
    pending, keys, registry = waiting
    outbox = tmp_path / "outbox"
    assert waiting_bundle(pending, outbox) == pending
    target, manifest = approve_bundle(pending, "Dr. Ana Ruiz", keys.private, outbox, WHEN)
    assert target == outbox / pending.name and waiting_bundle(pending, outbox) is None
    approval = manifest.approval
    assert approval is not None and approval.reviewer == "Dr. Ana Ruiz"
    assert approval.approved_sha256 == bundle_content_sha256("s1", manifest.artifacts)
    on_disk = json.loads((target / "manifest.json").read_text())
    assert on_disk["approval"]["reviewer"] == "Dr. Ana Ruiz"
    verified = verify_received_bundle(
        unpack_received(pack_bundle(target)), "s1", load_registry(registry)
    )
    assert verified.accepted.approval == approval
    assert approval_cell(verified.accepted.approval) == (
        f"Dr. Ana Ruiz, 2026-11-28 14:05 UTC (content {approval.approved_sha256[:12]})"
    )
    assert approval_cell(None) == "not required"


def _edit(bundle: Path, change: object, key: Path | None) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    change(manifest)  # type: ignore[operator]
    data = json.dumps(manifest).encode()
    (bundle / "manifest.json").write_bytes(data)
    if key is not None:
        (bundle / "manifest.json.sig").write_text(sign(data, load_private_key(key)))


@pytest.mark.parametrize(
    ("case", "resign", "reason"),
    [
        ("reviewer renamed after signing", False, "bad_signature"),
        ("approval names other files, re-signed", True, "approval_mismatch"),
    ],
)
def test_a_tampered_approval_is_refused_at_the_coordinator(
    tmp_path: Path, waiting: tuple[Path, SiteKeys, Path], case: str, resign: bool, reason: str
) -> None:
    pending, keys, registry = waiting
    target, _ = approve_bundle(pending, "Dr. Ana Ruiz", keys.private, tmp_path / "outbox", WHEN)

    def change(manifest: dict) -> None:
        if resign:
            manifest["approval"]["approved_sha256"] = "0" * 64
        else:
            manifest["approval"]["reviewer"] = "Somebody Else"

    _edit(target, change, keys.private if resign else None)
    with pytest.raises(BundleRejected) as refused:
        verify_received_bundle(raw_received(target), "s1", load_registry(registry))
    assert refused.value.reason == reason, case


def test_approval_refuses_a_changed_bundle_a_second_approval_and_a_bad_name(
    tmp_path: Path, waiting: tuple[Path, SiteKeys, Path]
) -> None:
    pending, keys, _ = waiting
    outbox = tmp_path / "outbox"
    with pytest.raises(UsageError, match="not a reviewer name"):
        approve_bundle(pending, "Ana\x1b[2J", keys.private, outbox)
    assert not outbox.exists()
    approve_bundle(pending, "Ana", keys.private, outbox)
    with pytest.raises(UsageError, match="already exists"):
        approve_bundle(pending, "Ana", keys.private, outbox)
    # an approved bundle cannot be approved again under another name
    with pytest.raises(UsageError, match="already approved by Ana"):
        approve_bundle(outbox / pending.name, "Luis", keys.private, tmp_path / "elsewhere")
    # a waiting bundle changed after it was built is not approved
    changed = tmp_path / "changed"
    built = good_bundle(tmp_path / "b", "s1", keys, n_documents=3)
    with (built / "synthetic.jsonl").open("a") as f:
        f.write('{"id": "new", "text": "Ana", "spans": []}\n')
    with pytest.raises(VerificationError, match="nothing was approved"):
        approve_bundle(built, "Ana", keys.private, changed)
    assert not changed.exists()
