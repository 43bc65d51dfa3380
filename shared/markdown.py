"""Strings from sites made inert in Markdown: the report's tables and every model card.

Rule names, labels, generation modes and details come from sites and may hold anything: HTML,
a ``|`` that opens a forged table cell, a line break that starts a forged row or heading. One
function makes such a string one inert table cell (or one inert line of prose).
"""

from __future__ import annotations

import html
import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def markdown_cell(text: str) -> str:
    """``text`` as one inert Markdown table cell: HTML escaped, ``|`` escaped, every line
    break and control character a space."""
    flat = CONTROL.sub(" ", text)
    return html.escape(flat, quote=False).replace("|", "\\|")
