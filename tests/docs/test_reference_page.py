"""docs/reference.md is what bench/reference_page.py makes of the code: every public name, each
with its docstring's first sentence, never typed and never stale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.bench_scripts import load_bench

import toolmgmt_core
import toolmgmt_core.integration as integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_what_the_code_gives() -> None:
    page = load_bench("reference_page")
    current = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert page.render() == current, "docs/reference.md is stale: run bench/reference_page.py"


def test_the_page_lists_every_public_name_once() -> None:
    listed = re.findall(r"^\| `(\w+)` \|", (ROOT / "docs" / "reference.md").read_text(), re.M)
    assert sorted(listed) == sorted([*toolmgmt_core.__all__, *integration.__all__])


def test_a_name_without_a_docstring_stops_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    page = load_bench("reference_page")

    def undocumented() -> None:
        pass

    monkeypatch.setattr(toolmgmt_core, "undocumented", undocumented, raising=False)
    with pytest.raises(SystemExit, match="toolmgmt_core.undocumented has no docstring"):
        page.summary("toolmgmt_core", "undocumented")


def test_the_summary_names_no_private_module() -> None:
    page = load_bench("reference_page")
    assert page.summary("toolmgmt_core", "PostgresEmbeddingCache").endswith(
        "the interface of `EmbeddingCache`."
    )
