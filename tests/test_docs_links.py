"""The documents hold together: every relative link resolves, README stays short, and the
paths ARCHITECTURE.md names exist.

A link is ``[text](target)``, ``![alt](target)`` or a reference definition ``[name]: target``
outside code; http(s) and mailto links are skipped. A ``#anchor`` into a Markdown file must
match one of its headings as GitHub renders the anchor.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`\n]*`+")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
EXTERNAL = ("http://", "https://", "mailto:")


def documents() -> list[Path]:
    named = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "benchmarks" / "README.md"]
    return [p for p in named if p.is_file()] + sorted((REPO / "docs").rglob("*.md"))


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link; link text may run over several lines."""
    prose = dict(prose_lines(text))
    lines = [INLINE_CODE.sub("", prose.get(n, "")) for n in range(1, len(text.splitlines()) + 1)]
    joined = "\n".join(lines)
    found = [
        (joined.count("\n", 0, m.start()) + 1, m.group(1)) for m in INLINE_LINK.finditer(joined)
    ]
    for number, line in enumerate(lines, start=1):
        reference = REFERENCE_LINK.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: rendered text, lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def broken_links(document: Path, root: Path = REPO) -> list[str]:
    problems = []
    for number, target in links(document.read_text(encoding="utf-8")):
        if target.startswith(EXTERNAL):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (document.parent / path_part).resolve() if path_part else document
        where = f"{document.relative_to(root)}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: no such file {resolved}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{where}: no heading with anchor #{anchor} in {resolved.name}")
    return problems


@pytest.mark.parametrize("document", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(document: Path) -> None:
    assert broken_links(document) == []


def test_link_checker_finds_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n", encoding="utf-8")
    page.write_text(
        "[ok](there.md#a-heading) ![img](missing.png) [bad](there.md#nope)\n"
        "```\n[in code](ignored.md)\n```\n[web](https://example.org/x.md) `[code](x.md)`\n"
        "[two\nlines](gone.md)\n",
        encoding="utf-8",
    )
    problems = broken_links(page, root=tmp_path)
    assert len(problems) == 3
    assert "missing.png" in problems[0] and "#nope" in problems[1]
    assert problems[2].startswith("page.md:6: gone.md")


def test_heading_anchors_follow_github() -> None:
    assert slug("The seed papers' tables on MEDDOCAN") == "the-seed-papers-tables-on-meddocan"
    assert slug("`annotator_threads.py`") == "annotator_threadspy"
    assert slug("Bibliography: the seed papers") == "bibliography-the-seed-papers"


def test_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, at most {README_MAX_LINES} allowed; "
        "move detail into docs/ and link it"
    )


PATH_LIKE = re.compile(r"^[\w.\-/]+$")


def architecture_paths() -> list[str]:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    spans = re.findall(r"`([^`\n]+)`", text)
    return sorted(
        {
            span
            for span in spans
            if PATH_LIKE.match(span) and ("/" in span or span.endswith((".py", ".md", ".toml")))
        }
    )


def test_architecture_names_existing_paths() -> None:
    missing = [path for path in architecture_paths() if not (REPO / path).exists()]
    assert missing == []


TOP_LEVEL = (
    "protocol/",
    "shared/",
    "ner/",
    "site_agent/",
    "coordinator/",
    "studies/",
    "benchmarks/",
)


def code_paths_named(text: str) -> set[str]:
    """Backticked source paths (``site_agent/privacy/identifying.py``) a document names."""
    return {
        span
        for span in re.findall(r"`([^`\n]+)`", text)
        if PATH_LIKE.match(span) and span.startswith(TOP_LEVEL) and span.endswith((".py", "/"))
    }


def test_every_source_path_the_documents_name_exists() -> None:
    """Code moves; the guides must move with it."""
    documents = [REPO / "README.md", REPO / "benchmarks" / "README.md"]
    documents += sorted((REPO / "docs").rglob("*.md"))
    missing = [
        f"{doc.relative_to(REPO)}: {path}"
        for doc in documents
        for path in sorted(code_paths_named(doc.read_text(encoding="utf-8")))
        if not (REPO / path).exists()
    ]
    assert missing == []


def test_the_path_check_reads_backticked_paths_only() -> None:
    text = "see `site_agent/gone.py` and `ner/` but not site_agent/plain.py or `x y/z.py`"
    assert code_paths_named(text) == {"site_agent/gone.py", "ner/"}
