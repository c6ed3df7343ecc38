"""The demo catalog behind an agent, as the adapter tests and ``bench/adapters.py`` run it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from toolmgmt_core import ToolCatalog, ToolManager
from toolmgmt_demo import demo_catalog

__all__ = ["demo_manager", "demo_tools"]


@functools.cache
def demo_tools() -> ToolCatalog:
    """The demo catalog, built once (its backends and search index take a while)."""
    return demo_catalog()


def demo_manager(
    mode: str = "search",
    *,
    deny: Sequence[str] = ("crm_delete_*",),
    catalog: ToolCatalog | None = None,
    **options: Any,
) -> ToolManager:
    """A manager as an agent meets it: ``mode``, three results a search, ``deny`` refused by an
    ``agent`` policy, over ``catalog`` (default: a fresh catalog of the demo tools); ``options``
    go to :class:`ToolManager` as they are."""
    return ToolManager(
        catalog if catalog is not None else ToolCatalog(list(demo_tools())),
        mode=mode,  # type: ignore[arg-type]
        max_results=3,
        policies=[{"label": "agent", "deny": list(deny)}],
        **options,
    )
