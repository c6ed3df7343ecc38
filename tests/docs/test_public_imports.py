"""What a user reads imports toolmgmt only from its public face: ``toolmgmt_core`` (and
``toolmgmt_core.integration`` where a page writes an integration); the adapters' and the
gateway's packages are their own public faces. The rest of the core is private and may move."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import toolmgmt_core
import toolmgmt_core.integration

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "notebooks").glob("*.md"),
        *(ROOT / "notebooks").glob("*.ipynb"),
        ROOT / "notebooks" / "_build.py",  # the notebooks' source
    ]
)
DOTTED = re.compile(r"\btoolmgmt_core\.([A-Za-z_]\w*)")
PUBLIC = {"integration", *toolmgmt_core.__all__}
"""What may follow ``toolmgmt_core.``: the integration module, or a name the top level exports."""


def _text(page: Path) -> str:
    if page.suffix == ".ipynb":
        cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(cell["source"]) for cell in cells)
    return page.read_text(encoding="utf-8")


def deep_references(text: str) -> list[str]:
    """Each ``toolmgmt_core.<name>`` in ``text`` whose name is a private module of the core."""
    return [
        f"line {text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for match in DOTTED.finditer(text)
        if match.group(1) not in PUBLIC
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_page_names_only_public_modules(page: Path) -> None:
    deep = deep_references(_text(page))
    assert not deep, f"import these from toolmgmt_core (docs/reference.md lists them): {deep}"


def test_the_check_finds_a_deep_import_and_passes_the_face() -> None:
    text = (
        "from toolmgmt_core import ToolCatalog\n"
        "from toolmgmt_core.integration import passthrough\n"
        "x = toolmgmt_core.ToolManager\n"
        "python -m toolmgmt_core usage\n"
        "from toolmgmt_core._calls.code import CodeLimits\n"
        "python -m toolmgmt_core._cli usage\n"
    )
    assert deep_references(text) == [
        "line 5: toolmgmt_core._calls",
        "line 6: toolmgmt_core._cli",
    ]
    assert any(page.suffix == ".ipynb" for page in PAGES)
