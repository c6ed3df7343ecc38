"""What a newcomer reads first: the README's opening, and plain words on every user page.

The README opens with the two commands the project runs (the main job, the tests), says what
the project is, gives one install line that works from a clone, and shows an agent loop that
runs offline before any figure table (the loop itself runs in ``test_docs_examples.py``).
User-facing pages (the README, ``docs/`` but the maintainers' ``architecture.md``, the
notebooks' README) use no project jargon ("doors", "rooms") and no changelog phrases ("until
now", "the former default", "issue 27"); a generated table is the generator's to word.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
USER_PAGES = [
    ROOT / "README.md",
    *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "architecture.md"),
    ROOT / "notebooks" / "README.md",
]
JARGON = {
    r"(?<!front[ -])\bdoors?\b": "say adapter, or how the call came in",
    r"\brooms?\b": "say package or folder",
    r"(?<!\")\bthe core's cut\b": "say the result as the core truncated it",
    r"\buntil now\b": "a changelog phrase",
    r"\bformer default\b": "a changelog phrase",
    r"\b(?:the )?issue(?:'s| \d+)": "a changelog phrase: say what is true now",
}
_GENERATED = re.compile(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", re.S)


def _fences(text: str) -> list[tuple[int, str, str]]:
    """``(line, language, code)`` of each fenced block."""
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M):
        found.append((text.count("\n", 0, match.start()) + 1, match.group(1), match.group(2)))
    return found


def test_the_readme_opens_with_the_main_job_and_the_tests() -> None:
    line, language, code = _fences(README)[0]
    commands = [c for c in code.splitlines() if c.strip() and not c.startswith("#")]
    assert language == "bash" and len(commands) == 2, code
    assert commands[0].endswith("toolmgmt report") and "pytest" in commands[1]


def test_one_install_line_from_a_clone_then_an_offline_loop_before_any_figure() -> None:
    fences = _fences(README)
    install = next(code for _, language, code in fences[1:] if language == "bash")
    assert len(install.strip().splitlines()) == 1, install
    assert re.match(r"git clone \S+ toolmgmt && cd toolmgmt && .*pip install -e \"\.\[", install)
    line, _, loop = next(f for f in fences if f[1] == "python")
    assert line < 100, f"the first example is at line {line}"
    for part in ("format_tools(", "await session.call(", "result.content", "while True"):
        assert part in loop, part
    # The mode table follows the opening commands (test_mode_table.py); every other figure
    # comes after the first loop.
    first_figure = README.index("<!-- figures:", README.index("<!-- /figures:modes -->"))
    assert README.index(loop) < first_figure
    assert "What it is" not in README[:200]  # what it is: said in prose, before the install
    assert README.index("is a Python library") < README.index("## Install")


@pytest.mark.parametrize("page", USER_PAGES, ids=[p.name for p in USER_PAGES])
def test_user_pages_speak_plainly(page: Path) -> None:
    text = _GENERATED.sub("", page.read_text(encoding="utf-8"))
    found = [
        f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r} ({why})"
        for pattern, why in JARGON.items()
        for m in re.finditer(pattern, text, re.I)
    ]
    assert not found, "\n".join(found)
