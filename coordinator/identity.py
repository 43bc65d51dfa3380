"""Which site a SuperNode is: the site whose registered auth key it connected with.

With SuperNode authentication on, the SuperLink admits a node only with a registered key and
gives it the node id it got when that key was registered. The deployment records
``{site id: node id}`` for every key it registers (``node-bindings.json``); at roll call a
node's self-reported site id must be the site its key belongs to. Without bindings (no TLS,
so no node authentication) the self-reported id is all there is.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import RootModel

from shared.atomic import atomic_write_text


class NodeBindings(RootModel[dict[str, int]]):
    """``{site id: SuperNode id}``."""

    def site_of(self, node: int) -> str | None:
        return next((site for site, bound in self.root.items() if bound == node), None)


def write_bindings(path: Path, bindings: dict[str, int]) -> Path:
    atomic_write_text(path, json.dumps(dict(sorted(bindings.items())), indent=2))
    return path


def load_bindings(path: Path | None) -> NodeBindings | None:
    if path is None:
        return None
    return NodeBindings.model_validate_json(path.read_text(encoding="utf-8"))


def identity_problem(node: int, claimed: str, bindings: NodeBindings | None) -> str | None:
    """Why ``node`` may not speak as ``claimed``; None when its key is that site's."""
    if bindings is None:
        return None
    owner = bindings.site_of(node)
    if owner is None:
        return f"node {node} authenticated with no registered site's key but said it is {claimed!r}"
    if owner != claimed:
        return f"node {node} holds the SuperNode key of {owner!r} but said it is {claimed!r}"
    return None
