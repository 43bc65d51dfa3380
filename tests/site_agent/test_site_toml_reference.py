"""Every field of every ``site.toml`` table is settable from a TOML file and documented.

For each field a value other than its default is written into a real ``site.toml``, loaded,
and must come back as that value (the table *is* the stage's settings type, so nothing is
mapped by hand and nothing is left unreachable). A new field that this table of values cannot
cover fails here until it gets one.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from site_agent.config import build_site_config, load_site_config
from site_agent.config_reference import leaf_fields, reference, tables

MINIMAL: dict[str, Any] = {"site_id": "h1", "corpus": {"path": "/data/gold.jsonl"}}
REPO = Path(__file__).resolve().parents[2]

# Values that a type alone does not suggest (valid names, exclusive choices, required fields).
SPECIAL: dict[tuple[str, ...], Any] = {
    ("profile",): "demo",
    ("site_id",): "h2",
    ("work_dir",): "/data/work",
    ("signing_key",): "/data/key.pem",
    ("corpus", "path"): "/data/other.jsonl",
    ("corpus", "format"): "jsonl",
    ("corpus", "validation_path"): "/data/dev.jsonl",
    ("corpus", "test_path"): "/data/test.jsonl",
    ("annotator", "training", "batch_size"): 8,
    ("annotator", "training", "grad_accumulation"): 2,
    ("adapt", "target_modules"): ["q_proj", "v_proj"],
    ("generation", "mode"): "tagged",
    ("generation", "amount"): 2.0,
    ("generation", "samples_per_prompt"): 5,
    ("generation", "max_new_tokens"): 80,
    ("audit", "policy", "measures"): ["ngram_recall"],
    ("audit", "policy", "filters", "enabled"): ["canary"],
    ("audit", "policy", "rules"): [
        {"name": "kept", "metric": "corpus.kept_documents", "comparison": ">=", "threshold": 2.0}
    ],
    ("audit", "policy", "ngram_recall", "sizes"): [4],
    ("audit", "policy", "nearest_real", "rouge_sizes"): [4],
    ("audit", "policy", "membership", "lm_weights"): [0.5, 0.25, 0.25],
    ("audit", "canaries", "count"): 1000,
}


def _other(info: FieldInfo) -> Any:
    """A valid value that differs from the field's default, chosen by type."""
    default = None if info.is_required() else info.get_default(call_default_factory=True)
    annotation = info.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        return next(a for a in typing.get_args(annotation) if a != default)
    if isinstance(annotation, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if annotation is bool or (default is None and annotation == bool | None):
        return not default
    if annotation is int:
        return 3 if default is None else default + 1
    if annotation is float:
        return 0.5 if not default else default / 2
    if annotation is str:
        return f"{default or 'x'}-changed"
    if typing.get_origin(annotation) is tuple and typing.get_args(annotation)[0] is str:
        return ["PER"]
    raise AssertionError(f"no test value for {annotation}; add one to SPECIAL")


def _fields() -> list[tuple[str, ...]]:
    return [(*path, name) for path, model in tables() for name, _ in leaf_fields(model)]


def _info(path: tuple[str, ...]) -> FieldInfo:
    model = dict(tables())[path[:-1]]
    return model.model_fields[path[-1]]


def _nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(MINIMAL))
    table = data
    for key in path[:-1]:
        table = table.setdefault(key, {})
    table[path[-1]] = value
    return data


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)  # strings, numbers and booleans read the same in TOML


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    scalars = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    text = (f"[{prefix}]\n" if prefix else "") + "".join(line + "\n" for line in scalars)
    for key, value in data.items():
        if isinstance(value, dict):
            text += _toml(value, f"{prefix}.{key}" if prefix else key)
    return text


def _get(config: BaseModel, path: tuple[str, ...]) -> Any:
    value: Any = config
    for key in path:
        value = getattr(value, key)
    return value


@pytest.mark.parametrize("path", _fields(), ids=".".join)
def test_every_field_is_settable_from_site_toml(path: tuple[str, ...], tmp_path: Path) -> None:
    value = SPECIAL[path] if path in SPECIAL else _other(_info(path))
    data = _nested(path, value)
    site_toml = tmp_path / "site.toml"
    site_toml.write_text(_toml(data), encoding="utf-8")
    loaded = load_site_config(site_toml)
    expected = build_site_config(data)
    assert _get(loaded, path) == _get(expected, path)
    assert _get(loaded, path) != _get(build_site_config(MINIMAL), path), "value did not change"


def test_every_field_is_documented() -> None:
    undocumented = [".".join(p) for p in _fields() if not _info(p).description]
    assert undocumented == []


def test_the_reference_in_docs_is_current() -> None:
    """Regenerate with ``python -m site_agent.config_reference > docs/site-toml.md``."""
    assert (REPO / "docs" / "site-toml.md").read_text(encoding="utf-8") == reference()
