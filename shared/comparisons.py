"""How an audit rule compares its measured figure with its threshold (one table for the site's
audit, the site's export gate and the coordinator's verifier)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": lambda a, b: math.isclose(a, b, rel_tol=0.0, abs_tol=1e-12),
}
