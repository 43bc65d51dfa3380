"""The export decision is made in one module, and each property is checked once on the site.

``site_agent.export.gate`` decides (verdict, seal, corpus hash, binding, re-judged policy,
document accounting); ``build_bundle`` calls it directly and then has the finished bundle
checked once more by the one bundle verifier (``shared.bundle_verify``), as the coordinator
will. No other module of the export repeats a check or reaches the gate by name.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus
from shared.corpus_io import write_corpus
from shared.signing import generate_signing_key
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.seal import seal_key, write_seal
from site_agent.export import bundle as bundle_module
from site_agent.export import gate
from site_agent.export.bundle import BundleRequest, build_bundle
from site_agent.export.gate import AuditBinding
from tests.site_agent.audit.builders import random_corpus

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("protocol", "shared", "site_agent", "coordinator")
GATE = REPO / "site_agent" / "export" / "gate.py"
# The gate's checks, each of one property, in the order the gate runs them.
CHECKS = (
    "report_file",
    "load_report",
    "check_seal",
    "check_verdict",
    "check_corpus_hash",
    "check_binding",
    "rejudge",
    "check_accounting",
)
# What an audit report claims; only the gate may decide on these.
CLAIMS = frozenset(
    {
        "passed",
        "failed_rules",
        "rules",
        "audited_corpus_sha256",
        "real_corpus_sha256",
        "input_corpus_sha256",
        "config_digest",
        "dropped_documents",
    }
)


def _trees(folder: Path) -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(folder.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_nothing_in_the_export_or_the_audit_reaches_a_module_by_name() -> None:
    """The gate is imported and called directly; the audit's measure and filter plugins load
    with plain imports (``shared.registry``)."""
    found = []
    for package in ("export", "audit"):
        for path, tree in _trees(REPO / "site_agent" / package):
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and "import_module" in ast.unparse(node.func):
                    found.append(f"{_rel(path)}: {ast.unparse(node)}")
    assert found == []


def test_refuse_is_defined_once_in_the_tree() -> None:
    defined = [
        f"{_rel(path)}:{node.name}"
        for package in SOURCES
        for path, tree in _trees(REPO / package)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "refuse"
    ]
    assert defined == ["site_agent/export/gate.py:refuse"]


def _decided_on(node: ast.AST) -> set[str]:
    """The report claims a comparison, condition or assertion in ``node`` reads."""
    tests: list[ast.AST] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Compare):
            tests.append(child)
        elif isinstance(child, ast.If | ast.IfExp | ast.While | ast.Assert):
            tests.append(child.test)
        elif isinstance(child, ast.BoolOp) or (
            isinstance(child, ast.UnaryOp) and isinstance(child.op, ast.Not)
        ):
            tests.append(child)
    return {
        a.attr
        for test in tests
        for a in ast.walk(test)
        if isinstance(a, ast.Attribute) and a.attr in CLAIMS
    }


def test_only_the_gate_decides_on_what_the_report_claims() -> None:
    """No export module but the gate compares or branches on the report's verdict, hashes,
    digest or dropped list, or calls one of the gate's checks."""
    repeated = {}
    for path, tree in _trees(REPO / "site_agent" / "export"):
        if path == GATE:
            continue
        calls = {
            n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
        }
        found = _decided_on(tree) | (calls & {*CHECKS, "seal_holds", "check_settings"})
        if found:
            repeated[_rel(path)] = sorted(found)
    assert repeated == {}
    gate_calls = {
        n.func.id
        for n in ast.walk(ast.parse(GATE.read_text(encoding="utf-8")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert set(CHECKS) <= gate_calls


@pytest.fixture
def sealed_site(tmp_path: Path) -> dict[str, Any]:
    """A passing audit of a small synthetic corpus, sealed as the audit stage seals it."""
    real = random_corpus(5, 12, "r", words=40)
    synthetic = Corpus(documents=random_corpus(6, 6, "s", words=40, other=True).documents)
    write_corpus(real, tmp_path / "train.jsonl")
    write_corpus(synthetic, tmp_path / "synthetic.jsonl")
    generate_signing_key(tmp_path / "k.pem", tmp_path / "k.pub.pem")
    audit_dir = tmp_path / "audit"
    report = run_audit(real, synthetic, AuditPolicy(), audit_dir)
    assert report.passed
    write_seal(audit_dir / "audit.json", report.audited_corpus_sha256, seal_key(tmp_path / "k.pem"))
    corpus, report_path = audit_dir / AUDITED_CORPUS, audit_dir / "audit.json"
    return {"root": tmp_path, "corpus": corpus, "report": report_path}


def _counted(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str, calls: Counter[str], key: str
) -> None:
    real: Callable[..., Any] = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[key] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)


def test_a_real_export_checks_each_property_once_then_verifies_once(
    sealed_site: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()
    for check in CHECKS:
        _counted(monkeypatch, gate, check, calls, check)
    _counted(monkeypatch, gate, "seal_holds", calls, "seal")
    _counted(monkeypatch, gate, "evaluate", calls, "policy re-judged")
    _counted(monkeypatch, bundle_module, "verify_bundle_bytes", calls, "bundle verifier")
    _counted(monkeypatch, bundle_module, "require_passing_audit", calls, "gate")
    corpus_hashes: list[Path] = []
    for module in (gate, bundle_module):
        real_hash = module.sha256_file

        def hashing(path: Path, real_hash: Callable[[Path], str] = real_hash) -> str:
            corpus_hashes.append(Path(path))
            return real_hash(path)

        monkeypatch.setattr(module, "sha256_file", hashing)

    root = sealed_site["root"]
    bundle, manifest = build_bundle(
        BundleRequest(
            site_id="h1",
            corpus_path=sealed_site["corpus"],
            audit_report_path=sealed_site["report"],
            signing_key_path=root / "k.pem",
            outbox=root / "outbox",
            config_digest="abc",
            base_models={},
            binding=AuditBinding(
                real=root / "train.jsonl",
                synthetic=root / "synthetic.jsonl",
                policy={},
                seal_key=seal_key(root / "k.pem"),
            ),
        )
    )
    assert manifest.audit.passed and json.loads((bundle / "audit.json").read_text())["passed"]
    expected = {check: 1 for check in CHECKS}
    expected |= {"seal": 1, "policy re-judged": 1, "bundle verifier": 1, "gate": 1}
    assert dict(calls) == expected
    assert corpus_hashes.count(sealed_site["corpus"]) == 1  # by the gate, before the copy
