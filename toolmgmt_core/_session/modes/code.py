"""Code mode: the model writes one short program that calls tools; only its output returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from toolmgmt_core._calls.code import CodeLimits, require_sandbox
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import RUN_CODE, TOOL_SEARCH, Tool
from toolmgmt_core._policy.callers import CallerChoice, Callers
from toolmgmt_core._session.meta_tools import code_search_tool, run_code_tool
from toolmgmt_core._session.modes.base import CanSee, Layout, Mode, Planner, Present, visible_named

__all__ = ["Code"]


@dataclass(frozen=True, repr=False)
class Code(Mode):
    """``tool_search`` (answering with Python signatures) and ``run_code`` (a program run in
    a sandbox, each of its calls through the session's call pipeline), plus always-on tools
    and the tools named in ``direct``; the list never changes.

    Usage::

        ToolManager(catalog, mode=Code())                       # or mode="code"
        ToolManager(catalog, mode=Code(direct=["send_email"]))  # also called directly
        ToolManager(catalog, mode=Code(callers=Callers(direct=["destructive"])))
        ToolManager(catalog, mode=Code(limits=CodeLimits(seconds=2.0)))

    Args:
        direct: tool names also listed for direct calls (both callers: the short form of
            ``Callers(both=[...])``).
        callers: which tools only the model calls directly, which only a program, which both
            (:class:`~toolmgmt_core.Callers`, by name, pattern or annotation); a tool it does
            not name is callable from a program only, unless always-on or in ``direct``
            (both).
        limits: what one program may use (time, memory, recursion, calls, output).

    Needs pydantic-monty: ``pip install "toolmgmt[code]"``.
    """

    direct: tuple[str, ...] = ()
    limits: CodeLimits = field(default_factory=CodeLimits)
    callers: Callers = field(default_factory=Callers)

    name: ClassVar[str] = "code"
    INSTRUCTIONS: ClassVar[str] = (
        "Tools are reached from code. Call tool_search with every need of the task in "
        "`queries`: it answers with Python signatures. Then call run_code once with a short "
        "async program that calls them (`await name(arg=...)`), combines their results and "
        "prints only what the answer needs: intermediate results never reach you."
    )
    FIND_HINT: ClassVar[str] = " Use tool_search to find tools, then call them in run_code."
    runs_code: ClassVar[bool] = True

    def __post_init__(self) -> None:
        direct = self.direct
        if isinstance(direct, str) or not all(isinstance(n, str) for n in direct):
            raise ConfigError(f"Code(direct=...) must be a list of tool names, got {direct!r}.")
        object.__setattr__(self, "direct", tuple(direct))
        if not isinstance(self.limits, CodeLimits):
            raise ConfigError(f"Code(limits=...) must be a CodeLimits(...), got {self.limits!r}.")
        if not isinstance(self.callers, Callers):
            raise ConfigError(f"Code(callers=...) must be a Callers(...), got {self.callers!r}.")
        require_sandbox()  # the extra is missing: say so now, not at the first program

    @property
    def appends_loads(self) -> bool:
        return False

    @property
    def code_limits(self) -> CodeLimits:
        """The limits of each program."""
        return self.limits

    def meta_tools(self, max_results: int) -> list[Tool]:
        return [code_search_tool(max_results), run_code_tool()]

    def caller_choice(self, tool: Tool, pinned: Sequence[str]) -> CallerChoice:
        listed = tool.name in self.direct or tool.name in pinned
        default: CallerChoice = "both" if listed else "code"
        return self.callers.choice(tool, default)

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        always = planner.pinned_names()
        named = [*always, *self.direct, *planner.named_by(self.callers)]
        visible = visible_named(planner, can_see, named)
        layout = Layout(mode=self, meta=planner.meta_tools(self))
        direct = [n for n, t in visible.items() if self.caller_choice(t, always) != "code"]
        pinned = [n for n in planner.pinned_of(visible) if n in direct]
        layout.pinned = [present(visible[n]) for n in pinned]
        layout.listed = [present(visible[n]) for n in direct if n not in pinned]
        return layout

    def unloaded_message(self, name: str) -> str:
        return (
            f"Tool {name!r} is called from code: run_code with `await {name}(...)` "
            f"(tool_search(query={name!r}) gives its parameters)."
        )

    def schema_hint(self, tool: Tool, pinned: Sequence[str]) -> str:
        return f" tool_search(query={tool.name!r}) gives its signature."

    def steps_to_call(
        self, tool: Tool, arguments: dict[str, Any], query: str
    ) -> list[tuple[str, dict[str, Any]]]:
        call = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return [
            (TOOL_SEARCH, {"query": query}),
            (RUN_CODE, {"code": f"await {tool.name}({call})"}),
        ]

    def __repr__(self) -> str:
        parts = []
        if self.direct:
            parts.append(f"direct={list(self.direct)!r}")
        if self.limits != CodeLimits():
            parts.append(f"limits={self.limits!r}")
        if self.callers != Callers():
            parts.append(f"callers={self.callers!r}")
        return f"Code({', '.join(parts)})"
