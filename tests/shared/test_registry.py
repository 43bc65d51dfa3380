"""The one registry idiom: add, look up, refuse unknown names with the allowed ones and the fix,
load built-ins once on first lookup; and the product uses it instead of strings of modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shared.errors import ConfigError, UsageError
from shared.registry import Registry

REPO = Path(__file__).resolve().parents[2]


def test_entries_register_and_look_up() -> None:
    table: Registry[int] = Registry("number")
    table.add("one", 1)

    @table.register("two")
    def two() -> int:
        return 2

    assert table.get("one") == 1 and table.get("two") is two
    assert table.names() == ["one", "two"] and "one" in table and len(table) == 2
    assert list(table) == ["one", "two"] and table.entries() == {"one": 1, "two": two}


def test_an_unknown_name_names_the_setting_the_allowed_names_and_the_fix() -> None:
    table: Registry[int] = Registry("number", error=UsageError, fix="count again")
    table.add("one", 1)
    with pytest.raises(UsageError) as caught:
        table.get("three", setting="[counting] number")
    assert str(caught.value.message) == (
        "[counting] number = 'three' is not a number; allowed: ['one']; fix: count again"
    )
    with pytest.raises(UsageError, match=r"unknown number 'three'; allowed: \['one'\]"):
        table.get("three")


def test_a_taken_name_needs_replace_unless_it_is_the_same_entry() -> None:
    table: Registry[str] = Registry("word")
    table.add("a", "alpha")
    table.add("a", "alpha")
    with pytest.raises(ValueError, match="already registered"):
        table.add("a", "beta")
    table.add("a", "beta", replace=True)
    assert table.get("a") == "beta"


def test_builtins_load_once_on_first_lookup() -> None:
    calls: list[int] = []
    table: Registry[int] = Registry("number", builtins=lambda: calls.append(table.add("b", 2)))
    assert calls == []
    assert table.names() == ["b"] and table.get("b") == 2 and calls == [2]


def test_scoped_forgets_what_was_registered_inside() -> None:
    table: Registry[int] = Registry("number")
    table.add("one", 1)
    with table.scoped():
        table.add("two", 2)
        table.remove("one")
        assert table.names() == ["two"]
    assert table.names() == ["one"]


def test_the_default_error_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Registry[int]("number").get("x")


def _import_module_calls(root: Path) -> list[str]:
    found = []
    for package in ("protocol", "shared", "site_agent", "coordinator", "studies"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
                if name in {"import_module", "__import__"}:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_the_product_loads_no_module_by_name() -> None:
    """Registries load their built-ins with plain imports the import graph can see."""
    assert _import_module_calls(REPO) == []


def test_a_second_thread_waits_for_the_builtins_the_first_is_loading() -> None:
    """Two threads' first lookups at once: the second waits for the builtins instead of finding
    an empty table (two model fetches in two threads hit this)."""
    import threading
    import time

    started = threading.Event()

    def builtins() -> None:
        started.set()
        time.sleep(0.3)
        table.add("late", 1)

    table: Registry[int] = Registry("thing", builtins=builtins)
    results: list[int] = []
    first = threading.Thread(target=lambda: results.append(table.get("late")))
    first.start()
    assert started.wait(timeout=10)
    results.append(table.get("late"))  # while the first thread is still loading
    first.join(timeout=10)
    assert results == [1, 1]
