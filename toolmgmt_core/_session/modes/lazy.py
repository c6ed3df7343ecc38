"""Lazy mode: every tool listed by name and description; parameters on request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import LOAD_TOOL_SCHEMA, Tool
from toolmgmt_core._session.meta_tools import load_tool_schema_tool
from toolmgmt_core._session.modes.base import CanSee, Layout, Mode, Planner, Present

__all__ = ["Lazy"]


@dataclass(frozen=True, repr=False)
class Lazy(Mode):
    """Every visible tool listed without its parameters, beside ``load_tool_schema``.

    Usage::

        ToolManager(catalog, mode=Lazy(descriptions="full"))   # or mode="lazy"

    Args:
        descriptions: list each tool's first sentence (``"summary"``) or its whole
            description (``"full"``).
    """

    descriptions: Literal["summary", "full"] = "summary"

    name: ClassVar[str] = "lazy"
    INSTRUCTIONS: ClassVar[str] = (
        "Tools are listed by name and description only. Before calling a tool for the first "
        "time, call load_tool_schema with its name (several at once is fine) to get its "
        "parameters; then call the tool directly."
    )
    FIND_HINT: ClassVar[str] = " Pick a name from your tool list."
    keeps_listed_loads: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.descriptions not in ("summary", "full"):
            raise ConfigError(
                f"Lazy(descriptions=...) must be 'summary' or 'full', got {self.descriptions!r}."
            )

    def meta_tools(self, max_results: int) -> list[Tool]:
        return [load_tool_schema_tool()]

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        visible = planner.visible(can_see)
        pinned, rest = planner.listing(visible)
        layout = Layout(mode=self, meta=planner.meta_tools(self))
        layout.pinned = [present(visible[n]) for n in pinned]
        layout.listed = [planner.stub(present(t), self.descriptions) for t in rest]
        layout.append_loaded(visible, present, loaded, pinned, rest)
        return layout

    def lists_without_loading(self, tool: Tool) -> bool:
        return tool.defer_loading is not True

    def unloaded_message(self, name: str) -> str:
        return (
            f"Tool {name!r} is not loaded yet: call load_tool_schema(tool_names=[{name!r}]) "
            "first, then call it."
        )

    def schema_hint(self, tool: Tool, pinned: Sequence[str]) -> str:
        if tool.name in pinned:
            return ""
        return f" Call load_tool_schema(tool_names=[{tool.name!r}]) for its parameters."

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        return [(LOAD_TOOL_SCHEMA, {"tool_names": [tool.name]}), (tool.name, arguments)]
