"""Every public module of toolmgmt_mcp has a sorted ``__all__`` of names that exist."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("mcp")

MODULES = [
    "toolmgmt_mcp",
    "toolmgmt_mcp.cli",
    "toolmgmt_mcp.config",
    "toolmgmt_mcp.server",
    "toolmgmt_mcp.upstreams",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported)
    assert all(hasattr(module, item) for item in exported)


def test_the_core_does_not_import_the_adapter() -> None:
    import sys

    import toolmgmt_core
    import toolmgmt_core.cli  # noqa: F401

    core_modules = [m for m in sys.modules if m.startswith("toolmgmt_core")]
    assert core_modules and toolmgmt_core.__name__ == "toolmgmt_core"
    source = open(toolmgmt_core.cli.__file__, encoding="utf-8").read()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any("toolmgmt_mcp" in line or " mcp" in line for line in top_level)
