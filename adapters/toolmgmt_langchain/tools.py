"""LangChain tools in a toolmgmt catalog, and the tools whose arguments the agent supplies.

:func:`add_langchain_tools` adds ``BaseTool`` objects (``@tool`` functions, ``StructuredTool``,
MCP tools from ``langchain-mcp-adapters``). A tool taking ``ToolRuntime``, ``InjectedState``,
``InjectedStore`` or ``InjectedToolCallId`` arguments runs through the agent's own ``ToolNode``,
which supplies those values, when the middleware answers its call (it hands the
:class:`NodeCall` down with the call, in its context's ``NODE`` slot); outside an agent it
cannot run.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.types import Command

from toolmgmt_core import (
    CallContext,
    CatalogError,
    IngestReport,
    InvalidToolError,
    Tool,
    ToolAnnotations,
    ToolCatalog,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.integration import NO_CONTEXT, Slot

__all__ = [
    "NodeCall",
    "add_langchain_tools",
]

_SUPPLIED = (InjectedState, InjectedStore, InjectedToolCallId, ToolRuntime)
"""Injected argument kinds the ToolNode supplies (a plain InjectedToolArg it does not)."""


class NodeCall:
    """The ToolNode call a middleware answers: where tools with injected arguments run. The
    middleware hands it down with the call (in the context's :data:`NODE` slot), so a call
    answered inside another (a meta-tool's, a program's) finds it too."""

    def __init__(self, request: Any, execute: Callable[[Any], Any]) -> None:
        self.request = request
        self.execute = execute
        self.commands: list[Command[Any]] = []
        """Commands those tools returned, merged into the middleware's answer."""


NODE: Slot[NodeCall] = Slot("langchain tool node")
"""The slot a call's :class:`NodeCall` travels in, from the middleware to the handlers."""


def _node_handler(tool: BaseTool, injected: Sequence[str]) -> Any:
    """The handler of a tool with injected arguments: the agent's ToolNode runs it."""

    async def run_in_tool_node(toolmgmt_context: CallContext = NO_CONTEXT, **arguments: Any) -> Any:
        node = toolmgmt_context.get(NODE)
        if node is None:
            raise ToolUnavailableError(
                f"Tool {tool.name!r} takes arguments LangChain supplies at run time "
                f"({', '.join(injected)}), so it runs only inside a create_agent agent with "
                "ToolManagerMiddleware; use another tool.",
                tool_name=tool.name,
            )
        call = {**node.request.tool_call, "name": tool.name, "args": arguments}
        response = node.execute(node.request.override(tool=tool, tool_call=call))
        if inspect.isawaitable(response):
            response = await response
        if isinstance(response, Command):
            node.commands.append(response)
            update = response.update if isinstance(response.update, Mapping) else {}
            own = [
                m
                for m in update.get("messages") or []
                if isinstance(m, ToolMessage) and m.tool_call_id == call["id"]
            ]
            return own[-1].content if own else "Done."
        if isinstance(response, ToolMessage):
            if response.status == "error":
                raise ToolExecutionError(
                    f"Tool {tool.name!r} failed: {response.content}", tool_name=tool.name
                )
            return response.content
        return response

    run_in_tool_node.__name__ = f"run_{tool.name}"
    return run_in_tool_node


def _handler(tool: BaseTool) -> Any:
    if isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None:

        async def run_async(**arguments: Any) -> Any:  # async-only, as MCP tools are
            return await tool.ainvoke(arguments)

        return run_async
    return lambda **arguments: tool.invoke(arguments)


def add_langchain_tools(
    catalog: ToolCatalog,
    tools: Iterable[BaseTool],
    *,
    on_error: Literal["raise", "skip"] = "raise",
    **fields: Any,
) -> IngestReport:
    """Add LangChain tools (including MCP tools from ``langchain-mcp-adapters``) to a catalog.

    Each keeps its name, description and argument schema; its handler invokes the tool
    (``ainvoke`` for async-only ones). A tool taking arguments the agent supplies at run time
    (``ToolRuntime``, ``InjectedState``, ``InjectedStore``, ``InjectedToolCallId``) runs through
    the agent's ``ToolNode`` when ``ToolManagerMiddleware`` answers its call (and nowhere
    else); one with a required plain ``InjectedToolArg``, which only the caller's own code
    can supply, is refused.

    Args:
        catalog: where to add them.
        tools: ``BaseTool`` instances (``@tool`` functions, ``StructuredTool``, MCP tools).
        on_error: ``"raise"`` adds none when one is bad; ``"skip"`` adds the good ones.
        fields: :class:`~toolmgmt_core.Tool` fields for every tool (``domain``, ``group``, ...).

    Raises:
        CatalogError: with ``on_error="raise"``, the first bad tool; nothing is added.
    """
    if on_error not in ("raise", "skip"):
        raise CatalogError(f"on_error must be 'raise' or 'skip', got {on_error!r}.")
    report = IngestReport()
    converted: list[Tool] = []
    for position, tool in enumerate(tools):
        try:
            converted.append(_convert_tool(tool, fields))
        except CatalogError as exc:
            if on_error == "raise":
                raise
            report.skipped.append((str(getattr(tool, "name", f"#{position}")), str(exc)))
    if on_error == "raise":
        catalog.add_many(converted)
        converted, to_add = [], converted
        report.added = [t.name for t in to_add]
    for item in converted:  # "skip": one by one, so a duplicate name skips only itself
        try:
            report.added.append(catalog.add(item).name)
        except CatalogError as exc:
            report.skipped.append((item.name, str(exc)))
    return report


def _convert_tool(tool: Any, fields: Mapping[str, Any]) -> Tool:
    if not isinstance(tool, BaseTool):
        raise InvalidToolError(
            f"Expected a LangChain BaseTool, got {type(tool).__name__}; wrap functions with "
            "langchain_core.tools.tool or add them with catalog.add_function()."
        )
    function = convert_to_openai_tool(tool)["function"]
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    names: set[str] = set()
    required: set[str] = set()
    if not isinstance(tool.args_schema, Mapping):  # a JSON Schema cannot mark injected fields
        # The fields, not model_json_schema(): a ToolRuntime field has no JSON Schema.
        model_fields = getattr(tool.get_input_schema(), "model_fields", {})
        names = set(model_fields)
        required = {n for n, f in model_fields.items() if f.is_required()}
    injected = sorted(names - set(parameters.get("properties", {})))
    hints = _annotations(tool)
    unsupplied = [
        n for n in injected if n in required and n != "runtime" and not _supplied(hints.get(n))
    ]
    if unsupplied:
        raise InvalidToolError(
            f"LangChain tool {tool.name!r} takes {', '.join(unsupplied)}, a plain "
            "InjectedToolArg that only your own code can supply, so toolmgmt cannot run it. "
            "Bind the value first (a new tool whose function fills it in), or take it as "
            "ToolRuntime / InjectedState, which the agent supplies."
        )
    extra = {"annotations": ToolAnnotations.from_mapping(tool.metadata or {}), **fields}
    extra["metadata"] = {**extra.get("metadata", {}), "langchain_tool": tool}
    return Tool(
        name=function["name"],
        description=function.get("description") or "",
        parameters=parameters,
        handler=_node_handler(tool, injected) if injected else _handler(tool),
        **extra,
    )


def _annotations(tool: BaseTool) -> dict[str, Any]:
    """The type hints of a tool's arguments, from its function and its argument schema."""
    found: dict[str, Any] = {}
    for source in (
        getattr(tool, "func", None) or getattr(tool, "coroutine", None),
        tool.args_schema,
    ):
        if source is None or isinstance(source, Mapping):
            continue
        try:
            found.update(typing.get_type_hints(source, include_extras=True))
        except Exception:  # unresolvable forward references: those arguments are checked as
            continue  # plain ones, and the ToolNode still decides at run time
    return found


def _supplied(hint: Any) -> bool:
    """Whether the ToolNode supplies an argument of this type (ToolRuntime, InjectedState...)."""
    stack = [hint]
    while stack:
        item = stack.pop()
        if isinstance(item, _SUPPLIED[:3]):
            return True
        kind = typing.get_origin(item) or item
        if isinstance(kind, type) and issubclass(kind, _SUPPLIED):
            return True
        stack.extend(typing.get_args(item))
        stack.extend(getattr(item, "__metadata__", ()))
    return False
