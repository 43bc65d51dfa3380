"""The privacy engine and the canaries sit below the audit; site.toml loads none of them.

``site_agent.privacy`` (text statistics) imports no other site_agent package;
``site_agent.canaries`` (planting, private records) only the engine; the stages before the
audit (pseudonymise, generate) use those two and never ``site_agent.audit``.
(That importing the site config loads none of them is tested in tests/test_import_rules.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_import_rules import imported_modules

REPO = Path(__file__).resolve().parents[2]
# package -> the site_agent packages it may import (besides itself)
BELOW_THE_AUDIT = {
    "privacy": set(),
    "canaries": {"privacy"},
    "pseudonymise": None,  # anything but the audit (the lead's composition root decides)
    "generate": None,
}


def _site_packages(package: str) -> set[str]:
    found = set()
    for path in (REPO / "site_agent" / package).rglob("*.py"):
        for module in imported_modules(path, REPO):
            parts = module.split(".")
            if parts[0] == "site_agent" and len(parts) > 1 and parts[1] != package:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(BELOW_THE_AUDIT))
def test_packages_below_the_audit_do_not_import_it(package: str) -> None:
    used = _site_packages(package)
    assert "audit" not in used and "export" not in used
    allowed = BELOW_THE_AUDIT[package]
    if allowed is not None:
        assert used <= allowed, f"site_agent.{package} imports {sorted(used - allowed)}"
