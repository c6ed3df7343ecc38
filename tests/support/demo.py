"""The demo catalog behind an agent, as the adapter tests and ``bench/adapters.py`` run it."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from toolmgmt_core import Access, Discovery, ToolCatalog, ToolManager
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
        mode=mode,
        discovery=_three_results(options.pop("discovery", None)),
        access=Access(policies=[{"label": "agent", "deny": list(deny)}]),
        **options,
    )


def _three_results(discovery: Discovery | None) -> Discovery:
    """``discovery`` with three results a search unless it sets its own number."""
    if discovery is None:
        return Discovery(max_results=3)
    if discovery.max_results == Discovery().max_results:
        return dataclasses.replace(discovery, max_results=3)
    return discovery
