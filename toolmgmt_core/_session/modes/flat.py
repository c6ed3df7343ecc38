"""Flat mode: every visible tool listed with its parameters (``auto`` below its threshold)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._session.modes.base import CanSee, LaidOutMode, Layout, Planner, Present
from toolmgmt_core._session.modes.search import Search

__all__ = ["Flat"]


@dataclass(frozen=True, repr=False)
class Flat(LaidOutMode):
    """Every visible tool, fully defined. Tools marked ``defer_loading=True`` stay out, behind
    a ``tool_search`` listed only for them.

    Usage::

        ToolManager(catalog, mode=Flat())   # or mode="flat"

    Args:
        search: how the deferred tools are found (the cache-stable ``Search()`` by default).
    """

    search: Search = field(default_factory=Search)
    searchable: bool = field(default=False, compare=False)
    """Set on the mode a plan returns: some tool is deferred, so ``tool_search`` is listed."""

    name: ClassVar[str] = "flat"
    FIND_HINT: ClassVar[str] = " Pick a name from your tool list."

    def __post_init__(self) -> None:
        if not isinstance(self.search, Search):
            raise ConfigError(f"Flat(search=...) must be a Search(...), got {self.search!r}.")

    @property
    def instructions(self) -> str:
        return self.search.instructions if self.searchable else ""

    @property
    def find_hint(self) -> str:
        return self.search.find_hint if self.searchable else self.FIND_HINT

    @property
    def appends_loads(self) -> bool:
        return self.search.appends_loads

    @property
    def stable_search(self) -> bool:
        return self.searchable and self.search.stable_search

    def meta_tools(self, max_results: int) -> list[Tool]:
        return self.search.meta_tools(max_results)

    def unloaded_message(self, name: str) -> str:
        return self.search.unloaded_message(name)

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        if tool.defer_loading is True:
            return self.search.steps_to_call(tool, arguments, query)
        return [(tool.name, arguments)]

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        visible = planner.visible(can_see)
        return self.layout(planner, visible, present, loaded)

    def layout(
        self,
        planner: Planner,
        visible: dict[str, Tool],
        present: Present,
        loaded: Sequence[str],
    ) -> Layout:
        """Flat's list over ``visible``: pinned, every listable tool, then loaded deferred ones."""
        pinned, rest = planner.listing(visible)
        searchable = any(t.defer_loading is True for t in visible.values())
        mode = replace(self, searchable=True) if searchable else self
        layout = Layout(mode=mode, meta=planner.meta_tools(self.search) if searchable else [])
        layout.pinned = [present(visible[n]) for n in pinned]
        layout.listed = [present(t) for t in rest]
        if self.search.appends:
            layout.append_loaded(visible, present, loaded, pinned, rest)
        return layout

    def __repr__(self) -> str:
        return "Flat()" if self.search == Search() else f"Flat(search={self.search!r})"
