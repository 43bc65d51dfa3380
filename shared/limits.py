"""Caps checked before any parse of untrusted JSON: size, nesting depth and member count.

Whatever crosses the federation (a manifest, an audit report, a site report, a corpus line) and
whatever a site operator points a command at is read through :func:`parse_json` or checked with
:func:`check_json_text` first. A 50 MB manifest or an object nested 100,000 deep is refused
with a :class:`LimitExceeded` naming the cap, instead of exhausting memory or raising
``RecursionError`` deep inside a parser. The caps are a pydantic type, so a coordinator or a
site can tighten or loosen them in its config.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field

from protocol.base import ProtocolModel
from shared.errors import ToolkitError

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # runs of plain characters at once
_BRACKET = re.compile(rb"[\[\]{}]")


class LimitExceeded(ToolkitError):
    """Untrusted input is larger, deeper or longer than its cap allows."""

    exit_code = 65

    def __init__(self, what: str, cap: str, found: str) -> None:
        super().__init__(
            f"{what}: {found}, over the cap of {cap}; fix: check where it came from (the caps "
            "are there to stop malformed or hostile input before it is parsed)"
        )
        self.what = what
        self.cap = cap


class JsonLimits(ProtocolModel):
    """Caps on one JSON document."""

    max_bytes: int = Field(8 * 1024 * 1024, ge=1, description="largest document in bytes")
    max_depth: int = Field(32, ge=1, description="deepest nesting of arrays and objects")
    max_members: int = Field(
        1_000_000, ge=1, description="most array items and object members, all levels together"
    )


def _structure(data: bytes) -> bytes:
    """``data`` with every string emptied: what is left is numbers, literals and punctuation."""
    return _STRING.sub(b'""', data)


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in ``data`` (brackets inside strings do not count)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_structure(data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def members_bound(text: bytes) -> int:
    """An upper bound on the members of the JSON ``text``, counted without parsing: an object
    of n members has n colons, an array of n items n - 1 commas and one opening bracket
    (colons and commas inside strings only raise the bound; :func:`_structure` drops them)."""
    return text.count(b":") + text.count(b",") + text.count(b"[")


def _members(value: Any) -> int:
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            count += len(item)
            stack.extend(item)
    return count


def check_json_text(data: bytes | str, limits: JsonLimits, what: str) -> bytes:
    """``data`` as bytes, once its size and nesting are within ``limits`` (nothing parsed).

    Nesting cannot be deeper than the number of opening brackets, so the strings are stripped
    (a regular expression over the whole text) only when the text has more of them than the
    cap allows."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > limits.max_bytes:
        raise LimitExceeded(what, f"{limits.max_bytes} bytes", f"{len(raw)} bytes")
    if raw.count(b"[") + raw.count(b"{") > limits.max_depth:
        depth = nesting_depth(raw)
        if depth > limits.max_depth:
            raise LimitExceeded(what, f"depth {limits.max_depth}", f"nested {depth} deep")
    return raw


def parse_json(data: bytes | str, limits: JsonLimits, what: str) -> Any:
    """``json.loads`` of ``data`` behind the caps; a ValueError (as json raises it) when the
    text is not JSON, a :class:`LimitExceeded` when it breaks a cap. The members are counted
    on the parsed value only when a bound counted on the text is over the cap (a corpus line
    of a few dozen members is not walked)."""
    raw = check_json_text(data, limits, what)
    value = json.loads(raw)
    if members_bound(raw) > limits.max_members and (
        members_bound(_structure(raw)) > limits.max_members
    ):
        members = _members(value)
        if members > limits.max_members:
            raise LimitExceeded(what, f"{limits.max_members} members", f"{members} members")
    return value
