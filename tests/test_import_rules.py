"""Who may import whom (ARCHITECTURE.md): site and coordinator share only protocol/, shared/
and the NER engine ner/.

Every module is parsed with ``ast``; every import counts, at module level or inside a function
or an ``if TYPE_CHECKING:`` block, and relative imports are resolved first.

- ``protocol`` imports only pydantic, the standard library and itself;
- ``shared`` imports neither ``ner``, ``site_agent`` nor ``coordinator``;
- ``ner`` imports neither ``site_agent`` nor ``coordinator``;
- ``site_agent`` never imports ``coordinator``;
- ``coordinator`` never imports ``site_agent``;
- ``studies`` (the research harness) may use the product; nothing in the product imports it.

Sub-packages form no import cycle (``test_no_sub_package_imports_itself_back``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("protocol", "shared", "ner", "site_agent", "coordinator", "studies")
PROTOCOL_MAY_USE = {"protocol", "pydantic", "__future__", *sys.stdlib_module_names}
# package -> the top-level packages it may never import (protocol: see PROTOCOL_MAY_USE)
REFUSED = {
    "shared": {"ner", "site_agent", "coordinator", "studies"},
    "ner": {"site_agent", "coordinator", "studies"},
    "site_agent": {"coordinator", "studies"},
    "coordinator": {"site_agent", "studies"},
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


# --- no import cycle between sub-packages -------------------------------------------------


def _unit(module: str, root: Path) -> str | None:
    """The sub-package (or top-level module) of one of PACKAGES that ``module`` belongs to."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if len(parts) > 1 and (
        (root / parts[0] / parts[1]).is_dir() or (root / parts[0] / f"{parts[1]}.py").exists()
    ):
        return ".".join(parts[:2])
    return parts[0]


def package_graph(root: Path) -> dict[str, set[str]]:
    """Sub-package -> the sub-packages it imports (every import, function-level included)."""
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            source = _unit(".".join(_module_name(path, root)), root)
            assert source is not None
            for module in imported_modules(path, root):
                target = _unit(module, root)
                if target is not None and target not in (source, package):
                    graph.setdefault(source, set()).add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_sub_package_imports_itself_back() -> None:
    assert cycles(package_graph(REPO)) == []


def test_the_cycle_checker_finds_a_function_level_cycle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "site_agent/a/__init__.py": "",
            "site_agent/a/x.py": "from site_agent.b import y\n",
            "site_agent/b/__init__.py": "",
            "site_agent/b/y.py": "def f():\n    from site_agent.a import x\n",
            "site_agent/c.py": "from site_agent.a import x\n",
        },
    )
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
    assert cycles(package_graph(root)) == [["site_agent.a", "site_agent.b"]]


def test_importing_the_site_config_loads_no_ml_library_and_no_audit_engine() -> None:
    """``site_agent.config`` (site.toml's types) is read by every command, the coordinator's
    tools and the docs generator: it must stay light."""
    from tests.conftest import loaded_after

    heavy = ("torch", "transformers", "peft", "numpy", "scipy", "pandas", "faker", "ahocorasick")
    engines = ("site_agent.privacy.", "site_agent.audit.corpus_audit", "site_agent.audit.context")
    gate = ("site_agent.export.gate", "datasets", "flwr")
    assert loaded_after("import site_agent.config", heavy + gate, engines) == []


def private_imports(root: Path, folders: tuple[str, ...] = ("benchmarks", "studies")) -> list[str]:
    """``file: module.name`` for every underscore name a harness file takes from the product."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    if node.module.split(".")[0] not in PACKAGES:
                        continue
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    parts = [p for p in node.module.split(".") if p.startswith("_")]
                    found.extend(f"{path.relative_to(root)}: {node.module}.{n}" for n in private)
                    if parts:
                        found.append(f"{path.relative_to(root)}: {node.module}")
    return found


def test_benchmarks_and_studies_use_only_public_names() -> None:
    assert private_imports(REPO) == []


def test_the_private_name_check_finds_one(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"benchmarks/b.py": "from site_agent.models.resolve import _HF_ID\n"})
    (root / "studies").mkdir()
    assert private_imports(root) == ["benchmarks/b.py: site_agent.models.resolve._HF_ID"]


STAGE_LIBRARIES = (
    "split",
    "pseudonymise",
    "annotator",
    "adapt",
    "generate",
    "audit",
    "train_synthetic",
    "export",
    "privacy",
    "canaries",
    "models",
)


def test_stage_libraries_never_reach_up_to_the_composition_root_or_the_site_config() -> None:
    """Stage packages are libraries: the adapters in site_agent/stages read site.toml and
    pass values down; nothing below reads the config, the machinery or an adapter."""
    above = ("site_agent.stages", "site_agent.pipeline", "site_agent.config", "site_agent.cli")
    found = [
        f"{path.relative_to(REPO)}: imports {module}"
        for library in STAGE_LIBRARIES
        for path in sorted((REPO / "site_agent" / library).rglob("*.py"))
        for module in sorted(imported_modules(path, REPO))
        if any(module == prefix or module.startswith(prefix + ".") for prefix in above)
    ]
    assert found == []
