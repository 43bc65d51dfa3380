"""How a label is written inside a marker the generator reads and writes (issue 46).

Labels are data: a hospital's scheme may write them in any case, with digits, hyphens, dots
or non-ASCII letters (``Date``, ``doctor-name``, ``ID.num``, ``Fecha_Alta``, ``Název``), and
everything downstream of the generator (spans, the audit's per-label figures, the export,
the coordinator's mapping and report) keeps them exactly as the corpus wrote them. Only
inside a placeholder (``{{Date:1}}``) or a tag (``<Date>``) does a label need a form the
markers' own punctuation cannot confuse: word characters (any script), ``.`` and ``-`` stand
as they are; any other character (a space, ``:``, ``{``, ``<``, ``/``, ``%``...) is
percent-escaped byte by byte in UTF-8 (``Phone #`` → ``Phone%20%23``). The escape is
one-to-one, so a marker read back from generated text maps to exactly one label
(:func:`label_of`); nothing is normalised, and the labels never change case. A marked mode's
synthetic corpus names the labels whose marker differs in its provenance (``label_markers``).
The labels no marker can name (blank, and ``O``, the annotator's outside tag) are refused
when the corpus is read for ``validate`` or the split stage (``shared.corpus_io``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import unquote

MARK_NAME = r"[\w.%-]+"
"""A label as markers write it: word characters of any script, ``.``, ``-`` and escapes."""
_KEPT = re.compile(r"[\w.-]")


def marker_name(label: str) -> str:
    """``label`` as placeholders and tags write it (unchanged unless it holds punctuation)."""
    return "".join(
        c if _KEPT.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in label
    )


def label_of(name: str) -> str:
    """The label a marker names (the inverse of :func:`marker_name`)."""
    return unquote(name, errors="replace") if "%" in name else name


def marker_notes(labels: Iterable[str]) -> dict[str, str]:
    """The provenance note of a marked mode's corpus: every label whose marker name differs
    from it (``{"Phone #": "Phone%20%23"}``, as JSON); nothing when none does."""
    escaped = {label: marker_name(label) for label in sorted(labels)}
    differ = {label: name for label, name in escaped.items() if name != label}
    return {"label_markers": json.dumps(differ, ensure_ascii=False)} if differ else {}
