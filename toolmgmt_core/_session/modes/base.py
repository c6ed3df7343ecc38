"""What every mode is: :class:`Mode`, and :class:`Layout`, the tool list of one step it plans.

A mode decides how a session shows the catalog to a model: which meta-tools it lists (and
answers), what the first tool list holds, where found tools go, and what the model is told when
it calls a tool the list does not hold. Code outside the mode classes never asks which mode it
has; it asks the mode.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.callers import CallerChoice, annotated

__all__ = [
    "CanSee",
    "LaidOutMode",
    "Layout",
    "Mode",
    "Planner",
    "Present",
    "visible_named",
]

CanSee = Callable[[Tool], bool]
"""Whether the session may see a catalog tool (its policy view, meta-tool names left out)."""
Present = Callable[[Tool], Tool]
"""A tool as the session shows it (description overrides applied)."""


class Planner(Protocol):
    """What a mode asks of the manager's planner (a
    :class:`~toolmgmt_core._session.layout.LayoutPlanner`): the catalog's tools as a session sees
    them, and the caches that depend only on the catalog version."""

    def meta_tools(self, mode: Mode | None = None) -> list[Tool]: ...
    def lookup(self, name: str, can_see: CanSee) -> Tool | None: ...
    def visible(self, can_see: CanSee) -> dict[str, Tool]: ...
    def pinned_names(self) -> list[str]: ...
    def named_by(self, callers: Any) -> list[str]: ...
    def pinned_of(self, visible: dict[str, Tool]) -> list[str]: ...
    def listing(self, visible: dict[str, Tool]) -> tuple[list[str], list[Tool]]: ...
    def exceeds(self, tools: Sequence[Tool], threshold: int) -> bool: ...
    def fitting(self, tools: Sequence[Tool], pinned: Sequence[str], budget: int) -> list[str]: ...
    def stub(self, tool: Tool, descriptions: str = "summary") -> Tool: ...


@dataclass
class Layout:
    """The tool list of one step, by section, and the mode that planned it."""

    mode: Mode
    """The effective mode (``auto`` plans as flat or search)."""
    meta: list[Tool] = field(default_factory=list)
    """The meta-tools listed (flat lists ``tool_search`` only when some tool is deferred)."""
    pinned: list[Tool] = field(default_factory=list)
    """Always-on tools, then tools whose ``defer_loading`` is False."""
    listed: list[Tool] = field(default_factory=list)
    """Tools listed up front: every visible one (flat), stubs (lazy), or those that fit
    ``auto``'s definitions budget."""
    appended: list[Tool] = field(default_factory=list)
    """Loaded tools, in load order, where loads join the list (``Search(appends=True)``,
    lazy); never in gateway mode or the cache-stable search."""

    @property
    def tools(self) -> list[Tool]:
        """The list sent to the model."""
        return [*self.meta, *self.pinned, *self.listed, *self.appended]

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """The names of :attr:`tools` (a planned layout is not changed: read once, kept; the
        manager's planner hands one layout to every call under the same plan)."""
        return frozenset(t.name for t in self.tools)

    def append_loaded(
        self,
        visible: dict[str, Tool],
        present: Present,
        loaded: Sequence[str],
        pinned: Sequence[str],
        listed: Sequence[Tool],
    ) -> None:
        """Append the loaded tools (visible ones, in load order) that the ``pinned`` names and
        ``listed`` tools do not already hold, as the session shows them."""
        taken = {*pinned, *(t.name for t in listed)}
        self.appended = [present(visible[n]) for n in loaded if n in visible and n not in taken]


class Mode(ABC):
    """How a session shows the catalog. Subclasses are small immutable option objects.

    Usage::

        ToolManager(catalog, mode=Search())           # or mode="search"
        ToolManager(catalog, mode=Auto(definitions_budget=8_000))
    """

    name: ClassVar[str]
    """The mode's name (``mode="..."`` and session state)."""
    INSTRUCTIONS: ClassVar[str] = ""
    FIND_HINT: ClassVar[str] = ""
    keeps_listed_loads: ClassVar[bool] = False
    """Whether loading a tool the list already holds is still recorded as a load."""
    runs_code: ClassVar[bool] = False
    """Whether the model calls tools from a program (``run_code``): ``tool_search`` then
    answers with Python signatures."""

    @property
    def appends_loads(self) -> bool:
        """Whether tools a search or schema request loads join the tool list."""
        return True

    @property
    def stable_search(self) -> bool:
        """Whether the tool list stays byte-identical for the whole conversation while the
        tools a search finds are called anyway (their definitions reach the model in the
        search's answer, or through a provider's native deferral): what keeps a provider's
        prompt cache. Such a mode answers ``tool_search`` with definitions, and a loaded tool
        may be called directly though it is not listed."""
        return False

    @property
    def instructions(self) -> str:
        """A short system-prompt text teaching the mode's workflow (empty: nothing to teach)."""
        return self.INSTRUCTIONS

    @property
    def find_hint(self) -> str:
        """How to find tools in this mode, as a sentence appended to a refusal."""
        return self.FIND_HINT

    def meta_tools(self, max_results: int) -> list[Tool]:
        """The meta-tools this mode answers (and lists, unless :meth:`plan` says otherwise)."""
        return []

    @abstractmethod
    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        """The tool list of one step.

        Args:
            planner: the manager's planner (catalog, always-on tools, caches).
            can_see: whether the session may see a catalog tool.
            present: a tool as the session shows it.
            loaded: the names the session loaded, in load order.
        """

    def effective(self, layout: Callable[[], Layout]) -> Mode:
        """The mode a session is in now (``auto`` asks its ``layout``)."""
        return self

    def callable_meta(self, layout: Callable[[], Layout], max_results: int) -> list[Tool]:
        """The meta-tools a call may name now."""
        return self.meta_tools(max_results)

    def lists_without_loading(self, tool: Tool) -> bool:
        """Whether ``tool`` (visible) is in the list whatever was loaded (no layout needed)."""
        return False

    def caller_choice(self, tool: Tool, pinned: Sequence[str]) -> CallerChoice:
        """Who may call ``tool`` (visible) in this mode: the model directly, a program, or
        both (:mod:`toolmgmt_core._policy.callers`); ``pinned``: the always-listed names.
        Without programs of its own, a mode follows the tool's annotation (a program of
        Anthropic's code execution), else direct."""
        return annotated(tool) or "direct"

    def unloaded_message(self, name: str) -> str:
        """What a direct call of ``name``, visible but not listed, is told to do instead."""
        return (
            f"Tool {name!r} is not loaded yet: call tool_search(query={name!r}) first; it is "
            "then added to your tools."
        )

    def schema_hint(self, tool: Tool, pinned: Sequence[str]) -> str:
        """Where a model whose arguments failed validation finds ``tool``'s parameters."""
        return ""

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        """The calls a model makes in this mode to reach ``tool`` from a fresh session and run
        it with ``arguments`` (the last one), searching with ``query`` where it searches
        (``toolmgmt report``'s cold start and the conversation bench script it)."""
        return [(tool.name, arguments)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LaidOutMode(Mode):
    """A mode whose plan may put the session in another mode (``auto`` plans as flat or
    search, ``flat`` lists ``tool_search`` when a tool is deferred): the session is in the
    layout's mode, and a call may name the layout's meta-tools."""

    def effective(self, layout: Callable[[], Layout]) -> Mode:
        return layout().mode

    def callable_meta(self, layout: Callable[[], Layout], max_results: int) -> list[Tool]:
        return layout().meta


def visible_named(planner: Planner, can_see: CanSee, names: Sequence[str]) -> dict[str, Tool]:
    """The visible catalog tools among ``names`` (never a scan of the whole catalog)."""
    visible: dict[str, Tool] = {}
    for name in names:
        if name not in visible and (tool := planner.lookup(name, can_see)) is not None:
            visible[name] = tool
    return visible
