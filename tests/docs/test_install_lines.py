"""Every install line in the README, docs/ and the notebooks works as written from a clone.

toolmgmt is not on a package index, so ``pip install "toolmgmt[langchain]"`` fails as written:
each ``pip install`` names the clone (``-e .``, ``-e ".[extra]"``), a local path or a built
wheel (``dist/toolmgmt-...whl[extra]``), or another project's package (``openai``, the CPU
build of ``torch`` from its own index: documentation only, never run here). No page names an
extra as ``toolmgmt[extra]``, which reads as an install target.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "notebooks" / "README.md",
    ROOT / "notebooks" / "_build.py",
    *sorted((ROOT / "notebooks").glob("*.ipynb")),
]
_INSTALL = re.compile(r"pip install\s+([^`\n#]+)")
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[\w,-]+\])?([<>=!~]=?[\w.*]+)?$")


def _text(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".ipynb":  # the cells' sources, as one text
        cells = json.loads(text)["cells"]
        return "\n".join("".join(cell.get("source", [])) for cell in cells)
    # a line broken inside an inline code span (`pip install -e\n".[x]"`) read as one line
    return re.sub(r"(pip install[^`\n]*)\n([^`\n]*`)", r"\1 \2", text)


def install_lines() -> list[tuple[str, str]]:
    """``(page:line, arguments)`` of every ``pip install`` in the pages."""
    found = []
    for page in PAGES:
        for number, line in enumerate(_text(page).splitlines(), start=1):
            for match in _INSTALL.finditer(line):
                where = f"{page.relative_to(ROOT)}:{number}"
                command = re.split(r"&&|\|\||;|\|", match.group(1))[0]  # up to the next command
                # a sentence's closing punctuation, but not the clone's own "." (-e .)
                found.append((where, re.sub(r"(?<=[^\s.])[.,:)]+$", "", command.strip())))
    return found


def problem(arguments: str) -> str | None:
    """Why an install line's ``arguments`` fail from a clone, or None when they work."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        return f"unbalanced quotes in {arguments!r}"
    targets, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in ("-e", "--editable"):
            continue
        elif word in ("--index-url", "--extra-index-url", "-r", "-c"):
            skip = True
        elif word.startswith("-"):
            continue
        else:
            targets.append(word)
    if not targets:
        return "installs nothing"
    for target in targets:
        local = target.startswith((".", "/", "dist/")) or ".whl" in target
        if local:
            continue
        if re.match(r"toolmgmt\b", target, re.I):
            return (
                f"{target!r} is not on a package index: install from the clone "
                f'(pip install -e ".[extra]") or a built wheel'
            )
        if not _PACKAGE.match(target):
            return f"{target!r} is neither a local path nor a package name"
    return None


INSTALLS = install_lines()


def test_the_install_lines_are_found() -> None:
    lines = [arguments for _, arguments in INSTALLS]
    assert '-e ".[all]"' in " ".join(lines)
    assert any("download.pytorch.org/whl/cpu" in a for a in lines)  # documented, not run
    assert len(INSTALLS) >= 10


@pytest.mark.parametrize(("where", "arguments"), INSTALLS, ids=[w for w, _ in INSTALLS])
def test_each_install_line_works_from_a_clone(where: str, arguments: str) -> None:
    assert problem(arguments) is None, f"{where}: pip install {arguments}: {problem(arguments)}"


def test_no_page_names_an_extra_as_an_install_target() -> None:
    named = [
        f"{page.relative_to(ROOT)}:{number}"
        for page in PAGES
        if page.name != "architecture.md"
        for number, line in enumerate(_text(page).splitlines(), start=1)
        if re.search(r"\btoolmgmt\[", line)
    ]
    assert not named, f'write pip install -e ".[extra]" (from the clone): {named}'


@pytest.mark.parametrize(
    ("arguments", "ok"),
    [
        ('-e ".[all]"', True),
        ("-e .", True),
        ('"dist/toolmgmt-0.1.0-py3-none-any.whl[langchain]"', True),
        ("torch --index-url https://download.pytorch.org/whl/cpu", True),
        ("langchain-openai", True),
        ('"toolmgmt[langchain]"', False),
        ("toolmgmt", False),
        ("-e", False),
    ],
)
def test_the_rule_itself(arguments: str, ok: bool) -> None:
    assert (problem(arguments) is None) is ok
