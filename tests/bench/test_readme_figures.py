"""The README's figures are the benchmarks' output: regenerated, never typed, and current."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _bench(name: str) -> ModuleType:
    """A bench script as a module (bench/ is a folder of scripts, not a package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def test_every_figure_block_is_what_the_results_give() -> None:
    figures = _bench("readme_figures")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = figures.blocks(text)
    assert "tokens" in found, "the README has lost its generated token table"
    assert figures.render(text) == text, "README figures are stale: run bench/readme_figures.py"


def test_a_typed_figure_is_caught(tmp_path: Path) -> None:
    figures = _bench("readme_figures")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = figures.blocks(text)["tokens"]
    tampered = tmp_path / "README.md"
    tampered.write_text(text.replace(block, block.replace("|", "| 1", 1)), encoding="utf-8")
    assert figures.main(["--check", "--readme", str(tampered)]) == 1


def test_the_token_results_are_what_the_code_computes_now() -> None:
    data = _bench("_data")
    try:
        data.load_bfcl()
    except FileNotFoundError as exc:
        pytest.skip(f"the shared BFCL data is not here: {exc}")
    tokens = _bench("tokens")
    stored = json.loads((BENCH / "results" / "tokens.json").read_text(encoding="utf-8"))
    encoding = stored["figures"]["encoding"]
    now = [tokens.measure(label, catalog, encoding) for label, catalog in tokens.catalogs()]
    assert now == stored["figures"]["catalogs"], (
        "token figures changed: run python bench/tokens.py --json bench/results/tokens.json, "
        "then python bench/readme_figures.py"
    )
