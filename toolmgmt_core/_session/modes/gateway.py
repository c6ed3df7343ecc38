"""Gateway mode: three meta-tools, and the list never changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolmgmt_core._model.tool import DISCOVER_TOOLS, EXECUTE_TOOL, GET_TOOL_SCHEMA, Tool
from toolmgmt_core._session.meta_tools import (
    discover_tools_tool,
    execute_tool_tool,
    get_tool_schema_tool,
)
from toolmgmt_core._session.modes.base import CanSee, Layout, Mode, Planner, Present, visible_named

__all__ = ["Gateway"]


@dataclass(frozen=True, repr=False)
class Gateway(Mode):
    """``discover_tools``, ``get_tool_schema`` and ``execute_tool`` (plus always-on tools); a
    tool runs through ``execute_tool``, so the list stays the same for the whole conversation.

    Usage::

        ToolManager(catalog, mode=Gateway())   # or mode="gateway"
    """

    name: ClassVar[str] = "gateway"
    INSTRUCTIONS: ClassVar[str] = (
        "Tools are reached in three steps. 1) discover_tools: no arguments lists domains; "
        "add `domain` (and `group`) to list their tools, or `query` to search by need. "
        "2) get_tool_schema(tool_name) gives parameters and examples. 3) execute_tool(tool_name, "
        'arguments) runs it. Errors of kind "call" mean fix the call; kind "tool" means '
        "the tool itself failed."
    )
    FIND_HINT: ClassVar[str] = " Use discover_tools to find tools."
    keeps_listed_loads: ClassVar[bool] = True

    @property
    def appends_loads(self) -> bool:
        return False

    def meta_tools(self, max_results: int) -> list[Tool]:
        return [discover_tools_tool(), get_tool_schema_tool(), execute_tool_tool()]

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        visible = visible_named(planner, can_see, planner.pinned_names())
        layout = Layout(mode=self, meta=planner.meta_tools(self))
        layout.pinned = [present(visible[n]) for n in planner.pinned_of(visible)]
        return layout

    def unloaded_message(self, name: str) -> str:
        return (
            f"Tool {name!r} cannot be called directly: use execute_tool(tool_name={name!r}, "
            "arguments={...}); get_tool_schema gives its parameters."
        )

    def schema_hint(self, tool: Tool, pinned: Sequence[str]) -> str:
        return f" Call get_tool_schema(tool_name={tool.name!r}) for its parameters."

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        return [
            (DISCOVER_TOOLS, {"query": query}),
            (GET_TOOL_SCHEMA, {"tool_name": tool.name}),
            (EXECUTE_TOOL, {"tool_name": tool.name, "arguments": arguments}),
        ]
