"""Search mode: ``tool_search`` finds tools; by default the tool list never changes.

Two ways to make a found tool callable:

- the cache-stable search (``Search()``, the default): ``tool_search`` answers with the found
  tools' definitions and ``call_tool(tool_name, arguments)`` runs one, so the list sent to the
  provider is byte-identical for the whole conversation and its prompt cache holds. Where the
  provider has deferred loading (Anthropic Messages, OpenAI Responses), ``format_tools`` sends
  the same session with the provider's native deferral instead: the search's answer loads the
  tools (``tool_reference`` blocks, a client ``tool_search_output``) and the model calls them
  directly (:mod:`toolmgmt_core._providers.deferral`);
- ``Search(appends=True)``: what a search finds joins the list, in load order. Every change
  rewrites the provider's prompt cache from the tools on (docs/cost.md has the bill).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import CALL_TOOL, TOOL_SEARCH, Tool
from toolmgmt_core._session.meta_tools import call_tool_tool, stable_search_tool, tool_search_tool
from toolmgmt_core._session.modes.base import CanSee, Layout, Mode, Planner, Present, visible_named

__all__ = ["Search"]


@dataclass(frozen=True, repr=False)
class Search(Mode):
    """A ``tool_search`` meta-tool over the catalog; the always-on tools listed beside it.

    Usage::

        ToolManager(catalog, mode=Search())               # or mode="search": cache-stable
        ToolManager(catalog, mode=Search(appends=True))   # found tools join the list

    Args:
        appends: found tools join the tool list (the list changes after each search that
            finds something new, so a provider's prompt cache is rewritten each time). False
            (default): the list never changes; ``tool_search`` answers with definitions and
            ``call_tool`` runs them, or the provider's native deferral loads them.
    """

    appends: bool = False

    name: ClassVar[str] = "search"
    INSTRUCTIONS: ClassVar[str] = (
        "Only some tools are listed. When you need a capability you do not see, call "
        "tool_search with a few words describing the need; put every need of the task in "
        "`queries` at once. Then call the tools it gives as its answer says. Searching again "
        "is safe."
    )
    APPEND_INSTRUCTIONS: ClassVar[str] = (
        "Only some tools are listed. When you need a capability you do not see, call "
        "tool_search with a few words describing the need (or several needs in `queries`). "
        "The tools found are added to your tool list; call them directly on your next step. "
        "Searching again is safe."
    )
    FIND_HINT: ClassVar[str] = " Use tool_search to find tools."

    def __post_init__(self) -> None:
        if not isinstance(self.appends, bool):
            raise ConfigError(f"Search(appends=...) must be True or False, got {self.appends!r}.")

    @property
    def instructions(self) -> str:
        return self.APPEND_INSTRUCTIONS if self.appends else self.INSTRUCTIONS

    @property
    def appends_loads(self) -> bool:
        return self.appends

    @property
    def stable_search(self) -> bool:
        return not self.appends

    def meta_tools(self, max_results: int) -> list[Tool]:
        if self.appends:
            return [tool_search_tool(max_results)]
        return [stable_search_tool(max_results), call_tool_tool()]

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        # Only the pinned and loaded tools matter: never scan a 100k-tool catalog per step.
        names = [*planner.pinned_names(), *(loaded if self.appends else ())]
        visible = visible_named(planner, can_see, names)
        return self.layout(planner, visible, present, loaded)

    def layout(
        self,
        planner: Planner,
        visible: dict[str, Tool],
        present: Present,
        loaded: Sequence[str],
        listed: Sequence[Tool] = (),
    ) -> Layout:
        """Search's list over ``visible``: meta-tools, pinned, ``listed`` (auto's budget), then
        loads (only with ``appends``)."""
        pinned = planner.pinned_of(visible)
        layout = Layout(mode=self, meta=planner.meta_tools(self))
        layout.pinned = [present(visible[n]) for n in pinned]
        layout.listed = [present(t) for t in listed]
        if self.appends:
            layout.append_loaded(visible, present, loaded, pinned, listed)
        return layout

    def unloaded_message(self, name: str) -> str:
        if self.appends:
            return super().unloaded_message(name)
        return (
            f"Tool {name!r} is not loaded yet: call tool_search(query={name!r}) first, then "
            f"run it with call_tool(tool_name={name!r}, arguments={{...}})."
        )

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        if self.appends:
            return [(TOOL_SEARCH, {"query": query}), (tool.name, arguments)]
        return [
            (TOOL_SEARCH, {"query": query}),
            (CALL_TOOL, {"tool_name": tool.name, "arguments": arguments}),
        ]

    def __repr__(self) -> str:
        return "Search(appends=True)" if self.appends else "Search()"
