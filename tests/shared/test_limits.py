"""Caps before parsing: size, depth (brackets inside strings ignored) and member count."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.limits import (
    JsonLimits,
    LimitExceeded,
    _members,
    _structure,
    members_bound,
    nesting_depth,
    parse_json,
)

SMALL = JsonLimits(max_bytes=1000, max_depth=3, max_members=10)


def _depth_oracle(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth_oracle(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth_oracle(v) for v in value), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_depth_matches_the_parsed_value(value: object) -> None:
    assert nesting_depth(json.dumps(value).encode()) == _depth_oracle(value)


def test_a_deep_document_is_refused_before_parsing() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(LimitExceeded, match=r"manifest: nested 100000 deep, over the cap"):
        parse_json(deep, JsonLimits(), "manifest")


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("[" + ",".join(["1"] * 11) + "]", "10 members"),
        ('{"a": [[[[1]]]]}', "depth 3"),
        ('"' + "x" * 2000 + '"', "1000 bytes"),
    ],
)
def test_each_cap_is_named(text: str, cap: str) -> None:
    with pytest.raises(LimitExceeded, match=cap):
        parse_json(text, SMALL, "reply")


def test_within_the_caps_it_parses_and_brackets_in_strings_do_not_count() -> None:
    assert parse_json('{"a": "[[[[[[", "b": [1, 2]}', SMALL, "x") == {"a": "[[[[[[", "b": [1, 2]}


def test_not_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_json("{nope", SMALL, "x")


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_members_bound_is_never_below_the_count(value: object) -> None:
    text = json.dumps(value).encode()
    assert members_bound(text) >= members_bound(_structure(text)) >= _members(value)


@settings(max_examples=150, deadline=None)
@given(json_values, st.integers(min_value=1, max_value=12), st.sampled_from(["depth", "members"]))
def test_a_document_is_refused_exactly_when_it_breaks_a_cap(
    value: object, cap: int, kind: str
) -> None:
    """The shortcuts (counts on the raw text) never let through what the exact counts refuse,
    nor refuse what they let through."""
    depth, members = (cap, 1_000) if kind == "depth" else (64, cap)
    limits = JsonLimits(max_bytes=100_000, max_depth=depth, max_members=members)
    text = json.dumps(value)
    found = _depth_oracle(value) if kind == "depth" else _members(value)
    if found > cap:
        with pytest.raises(
            LimitExceeded, match=f"{kind} {cap}" if kind == "depth" else f"{cap} members"
        ):
            parse_json(text, limits, "x")
    else:
        assert parse_json(text, limits, "x") == value
