"""The README picks the mode for the reader: right after the two opening commands, one generated
table of every mode the code accepts; and the pages' policy files and load figures are what the
code reads and the benchmarks measured."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from toolmgmt_core._cli import main
from toolmgmt_core._session.modes import MODES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _figures() -> ModuleType:
    bench = ROOT / "bench"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location(
        "bench_readme_figures", bench / "readme_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_mode_table_lists_every_mode_the_code_accepts_right_after_the_commands() -> None:
    block = _figures().blocks(README)["modes"]
    modes = re.findall(r"^\| `(\w+)` \|", block, re.M)
    assert sorted(modes) == sorted(MODES) and len(modes) == len(MODES) == 6
    after_commands = README[README.index("```\n", README.index("```bash") + 3) + 4 :]
    assert after_commands.lstrip().startswith("## Pick a mode"), after_commands[:200]
    first_section = after_commands.lstrip().split("\n## ")[0]
    assert "<!-- figures:modes -->" in first_section


def test_the_mode_table_cannot_miss_a_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _figures()
    monkeypatch.delitem(figures.MODE_GUIDE, "lazy")
    with pytest.raises(KeyError, match="lazy"):
        figures.RENDERERS["modes"](figures.RESULTS_DIR)


def test_the_gateway_page_figures_are_what_the_results_give() -> None:
    figures = _figures()
    page = ROOT / "docs" / "mcp-gateway.md"
    assert page in figures.DOCUMENTS
    text = page.read_text(encoding="utf-8")
    assert "gateway_load" in figures.blocks(text)
    assert figures.render(text) == text, "docs/mcp-gateway.md is stale: run readme_figures.py"


POLICY_FILES = [
    (page, match.group(1))
    for page in PAGES
    for match in re.finditer(r"```toml\n(# policy\.toml\n.*?)```", page.read_text("utf-8"), re.S)
]


@pytest.mark.parametrize("page, text", POLICY_FILES, ids=[p.name for p, _ in POLICY_FILES])
def test_each_policy_file_checks_clean_against_the_demo_catalog(
    page: Path, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["check", "--config", str(path), "--catalog", "toolmgmt_demo:demo_catalog"])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[-1].endswith("0 errors, 0 warnings."), out


def test_the_readme_shows_a_policy_file() -> None:
    assert any(page.name == "README.md" for page, _ in POLICY_FILES)
