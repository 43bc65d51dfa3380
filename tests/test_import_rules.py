"""Who may import whom (ARCHITECTURE.md): site and coordinator share only protocol/, shared/
and the NER engine ner/.

Every module is parsed with ``ast``; every import counts, at module level or inside a function
or an ``if TYPE_CHECKING:`` block, and relative imports are resolved first.

- ``protocol`` imports only pydantic, the standard library and itself;
- ``shared`` imports neither ``ner``, ``site_agent`` nor ``coordinator``;
- ``ner`` imports neither ``site_agent`` nor ``coordinator``;
- ``site_agent`` never imports ``coordinator``;
- ``coordinator`` never imports ``site_agent``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("protocol", "shared", "ner", "site_agent", "coordinator")
PROTOCOL_MAY_USE = {"protocol", "pydantic", "__future__", *sys.stdlib_module_names}
# package -> the top-level packages it may never import (protocol: see PROTOCOL_MAY_USE)
REFUSED = {
    "shared": {"ner", "site_agent", "coordinator"},
    "ner": {"site_agent", "coordinator"},
    "site_agent": {"coordinator"},
    "coordinator": {"site_agent"},
}


def _module_name(path: Path, root: Path) -> list[str]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported_modules(path: Path, root: Path) -> set[str]:
    """Every module ``path`` imports, absolute, with ``from m import n`` also giving ``m.n``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path, root)
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def forbidden(package: str, module: str) -> bool:
    top = module.split(".")[0]
    if package == "protocol":
        return top not in PROTOCOL_MAY_USE
    return top in REFUSED.get(package, set())


def violations(root: Path) -> list[str]:
    """``file: imports module`` for every import the rules refuse."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for module in sorted(imported_modules(path, root)):
                if forbidden(package, module):
                    found.append(f"{rel}: imports {module}")
    return found


def test_the_tree_follows_the_import_rules() -> None:
    assert violations(REPO) == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, source in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(source, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("rel", "source", "expected"),
    [
        ("site_agent/x.py", "def f():\n    from coordinator import wire\n", "coordinator"),
        (
            "site_agent/y.py",
            "import coordinator.aggregate.fedavg\n",
            "coordinator.aggregate.fedavg",
        ),
        ("coordinator/z.py", "from site_agent.audit import run\n", "site_agent.audit"),
        (
            "coordinator/aggregate/trainer.py",
            "from site_agent.annotator import train_annotator\n",  # no exception any more
            "site_agent.annotator",
        ),
        ("coordinator/aggregate/trainer.py", "from ner.train import train_annotator\n", None),
        ("ner/train.py", "from site_agent.models import resolve_model\n", "site_agent.models"),
        ("ner/infer.py", "def f():\n    from coordinator import wire\n", "coordinator"),
        ("site_agent/annotator/encoder.py", "from ner.infer import machine_annotate\n", None),
        ("shared/u.py", "from ner.recipe import corpus_recipe\n", "ner.recipe"),
        ("protocol/v.py", "import ner\n", "ner"),
        ("coordinator/demo.py", "from site_agent.audit import run\n", "site_agent.audit"),
        ("protocol/p.py", "import numpy as np\n", "numpy"),
        ("protocol/q.py", "from shared.errors import ConfigError\n", "shared.errors"),
        ("protocol/r.py", "import json\nfrom pydantic import Field\nfrom . import base\n", None),
        (
            "shared/s.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from site_agent import cli\n",
            "site_agent",
        ),
        ("coordinator/sub/t.py", "from ..site_agent_like import x\n", None),
    ],
)
def test_the_checker_catches_a_forbidden_import(
    tmp_path: Path, rel: str, source: str, expected: str | None
) -> None:
    found = violations(_tree(tmp_path, {rel: source}))
    if expected is None:
        assert found == []
    else:
        assert f"{rel}: imports {expected}" in found


def test_relative_imports_are_resolved_before_checking(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"site_agent/federation/a.py": "from ..export import bundle\n"})
    modules = imported_modules(root / "site_agent/federation/a.py", root)
    assert modules == {"site_agent.export", "site_agent.export.bundle"}
