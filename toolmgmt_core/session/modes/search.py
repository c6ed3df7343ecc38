"""Search mode: ``tool_search`` finds tools, and what it finds joins the tool list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolmgmt_core.model.tool import TOOL_SEARCH, Tool
from toolmgmt_core.session.meta_tools import tool_search_tool
from toolmgmt_core.session.modes.base import CanSee, Layout, Mode, Planner, Present, visible_named

__all__ = ["Search"]


@dataclass(frozen=True, repr=False)
class Search(Mode):
    """A ``tool_search`` meta-tool; the tools it finds are appended to the list, in load order.

    Usage::

        ToolManager(catalog, mode=Search())   # or mode="search"
    """

    name: ClassVar[str] = "search"
    INSTRUCTIONS: ClassVar[str] = (
        "Only some tools are listed. When you need a capability you do not see, call "
        "tool_search with a few words describing the need (or several needs in `queries`). "
        "The tools found are added to your tool list; call them directly on your next step. "
        "Searching again is safe."
    )
    FIND_HINT: ClassVar[str] = " Use tool_search to find tools."

    def meta_tools(self, max_results: int) -> list[Tool]:
        return [tool_search_tool(max_results)]

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        # Only the pinned and loaded tools matter: never scan a 100k-tool catalog per step.
        visible = visible_named(planner, can_see, [*planner.pinned_names(), *loaded])
        return self.layout(planner, visible, present, loaded)

    def layout(
        self,
        planner: Planner,
        visible: dict[str, Tool],
        present: Present,
        loaded: Sequence[str],
        listed: Sequence[Tool] = (),
    ) -> Layout:
        """Search's list over ``visible``: meta-tool, pinned, ``listed`` (auto's budget), loads."""
        pinned = planner.pinned_of(visible)
        layout = Layout(mode=self, meta=planner.meta_tools(self))
        layout.pinned = [present(visible[n]) for n in pinned]
        layout.listed = [present(t) for t in listed]
        taken = {*pinned, *(t.name for t in listed)}
        layout.appended = [present(visible[n]) for n in loaded if n in visible and n not in taken]
        return layout

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        return [(TOOL_SEARCH, {"query": query}), (tool.name, arguments)]
