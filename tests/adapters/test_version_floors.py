"""Each adapter's minimum framework version is the floor of its extra in pyproject.toml, and
docs/adapters.md names the same ones: one fact, said in the places that must agree."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

# (adapter module, its constant, the distribution it checks, the extra that installs it)
FLOORS = [
    ("toolmgmt_langchain", "MIN_LANGCHAIN_VERSION", "langchain", "langchain"),
    ("toolmgmt_pydantic_ai", "MIN_PYDANTIC_AI_VERSION", "pydantic-ai-slim", "pydantic-ai"),
    ("toolmgmt_litellm", "MIN_LITELLM_VERSION", "litellm", "litellm"),
    ("toolmgmt_mcp", "MIN_MCP_VERSION", "mcp", "mcp"),
]


def _extra_floor(extra: str, distribution: str) -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pattern = re.compile(rf"^{re.escape(distribution)}(\[[^\]]*\])?>=([\w.]+)")
    floors = [
        m.group(2)
        for requirement in project["optional-dependencies"][extra]
        if (m := pattern.match(requirement))
    ]
    assert len(floors) == 1, f"{extra}: no single {distribution}>= requirement"
    return floors[0]


@pytest.mark.parametrize(("module", "constant", "distribution", "extra"), FLOORS)
def test_the_adapters_minimum_is_its_extras_floor(
    module: str, constant: str, distribution: str, extra: str
) -> None:
    minimum = getattr(importlib.import_module(module), constant)
    assert _extra_floor(extra, distribution) == minimum
    if constant != "MIN_MCP_VERSION":  # the gateway's page is deploy.md, not adapters.md
        docs = (ROOT / "docs/adapters.md").read_text(encoding="utf-8")
        assert f'`{constant} =\n"{minimum}"`' in docs or f'`{constant} = "{minimum}"`' in docs
