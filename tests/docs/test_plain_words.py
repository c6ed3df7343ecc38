"""What a user reads names what a user knows (frameworks, tools, calls, servers, packages), not
the project's private vocabulary: no "door" for an adapter or the gateway, no "lane" for a
tool's threads, no "room" for a package, no "seam" for a hook. Checked in the docs, the README,
and the docstrings, strings (error messages) and comments of the core, the adapters and the
gateway."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "toolmgmt_core", ROOT / "adapters", ROOT / "gateway"]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

HOUSE_WORDS = re.compile(
    r"\bdoors?\b|\blanes?\b|\bseams?\b|\brooms\b|\broom's\b"
    r"|\b(?:core's|search|learning|each|every|a|no) room\b(?! for)|\broom (?:imports|holds)\b"
    r"|\bhouse\b(?! number)",
    re.IGNORECASE,
)
"""The house's words, in the senses a user never meets ("room for a marker" and "a house
number" are plain English). Strings without a space are code, not prose (the address
redaction's pattern keeps a street's "lane")."""


def _prose(path: Path) -> list[tuple[int, str]]:
    """The docstrings, string literals and comments of a Python file, with their lines."""
    source = path.read_text(encoding="utf-8")
    found = [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value
    ]
    found += [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    return found


_CODE_SPAN = re.compile(r"``[^`]*``|`[^`]*`")
"""Inline code names an identifier (a parameter called ``lane``), not a word of the prose."""


def _hits(text: str) -> list[str]:
    return [match.group(0) for match in HOUSE_WORDS.finditer(_CODE_SPAN.sub("", text))]


def test_docs_and_readme_use_plain_words() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}: {', '.join(words)}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if (words := _hits(line))
    ]
    assert not found, "house words in the docs:\n" + "\n".join(found)


def test_docstrings_errors_and_comments_use_plain_words() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {', '.join(words)}"
        for tree in CODE
        for path in sorted(tree.rglob("*.py"))
        for number, text in _prose(path)
        if (words := _hits(text))
    ]
    assert not found, "house words in the code's prose:\n" + "\n".join(found)


def test_the_check_tells_house_words_from_plain_english() -> None:
    assert _hits("each door maps it; a work lane; the core's rooms; a room imports; seams")
    assert not _hits("room for a truncation marker; made room for newer ones; a house number")
    assert not _hits("run_on_lane, test_cross_door.py, MAX_LANES")
