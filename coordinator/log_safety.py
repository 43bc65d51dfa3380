"""Coordinator log lines that a site cannot forge.

Site ids, labels and reasons that a site sent end up in log messages. A newline or an ANSI
escape in them would start a fake log line or repaint the terminal. The filter installed on
the coordinator's logger writes every control character of a message's arguments as an
escape (``\\n``, ``\\x1b``), so one record is one line whatever a site sent.
"""

from __future__ import annotations

import logging
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_control(text: str) -> str:
    """``text`` with every control character written as a Python escape."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class EscapeControlCharacters(logging.Filter):
    """Escapes control characters in a record's message and string arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(escape_control(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str) and not record.args:
            record.msg = escape_control(record.msg)
        return True


def install(logger: logging.Logger) -> None:
    """Add the filter to ``logger`` once."""
    if not any(isinstance(f, EscapeControlCharacters) for f in logger.filters):
        logger.addFilter(EscapeControlCharacters())
