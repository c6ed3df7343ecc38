"""Every package of the distribution ships its types (PEP 561): a user's mypy sees them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "toolmgmt_core",
    "toolmgmt_demo",
    "toolmgmt_deploy",
    "toolmgmt_gateway",
    "toolmgmt_langchain",
    "toolmgmt_litellm",
    "toolmgmt_mcp",
    "toolmgmt_pydantic_ai",
)


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_ships_py_typed(name: str) -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in settings["tool"]["setuptools"]["package-data"][name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    assert (folder / "py.typed").is_file()
