"""LangChain adapter: a ``create_agent`` middleware whose tools come from a toolmgmt session.

Usage::

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from toolmgmt_core import ToolCatalog, ToolManager
    from toolmgmt_langchain import ToolManagerMiddleware, add_langchain_tools

    catalog = ToolCatalog()
    add_langchain_tools(catalog, my_langchain_tools, domain="crm")  # MCP tools too
    agent = create_agent(
        "openai:gpt-4.1",
        tools=[],  # the middleware supplies and runs them
        middleware=[ToolManagerMiddleware(ToolManager(catalog, mode="search"))],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "1"}})

Each model call gets the session's tools (meta-tools, then always-on, then loaded tools);
each tool call runs through the session (policy, validation, truncation) and the session's
state travels in the agent state under ``"toolmgmt"``, so a checkpointer restores loaded tools.
Tools passed to ``create_agent`` that are not in the catalog are left to LangChain.

For a hand-written loop: ``bind_session_tools(model, session)`` and
``run_tool_calls(session, ai_message)`` (``arun_tool_calls`` when async).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal

from typing_extensions import NotRequired

from toolmgmt_core import (
    CatalogError,
    ConfigError,
    IngestReport,
    InvalidToolError,
    Tool,
    ToolAnnotations,
)
from toolmgmt_core.catalog import ToolCatalog
from toolmgmt_core.compat import require_version
from toolmgmt_core.manager import ToolManager
from toolmgmt_core.meta_tools import META_TOOL_NAMES
from toolmgmt_core.providers import format_tools
from toolmgmt_core.session import ToolSession

MIN_LANGCHAIN_VERSION = "1.0"
"""Oldest supported ``langchain`` (the ``create_agent`` middleware API)."""

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState
    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'toolmgmt_langchain needs LangChain: pip install "toolmgmt[langchain]"'
    ) from exc

require_version("langchain", MIN_LANGCHAIN_VERSION, "langchain")

from toolmgmt_langchain.embeddings import LangChainEmbedder  # noqa: E402

__all__ = [
    "LangChainEmbedder",
    "MIN_LANGCHAIN_VERSION",
    "STATE_KEY",
    "ToolManagerMiddleware",
    "ToolManagerState",
    "add_langchain_tools",
    "arun_tool_calls",
    "bind_session_tools",
    "run_tool_calls",
    "session_tool_definitions",
]

STATE_KEY = "toolmgmt"
"""Agent-state key holding ``{"rev": n, "session": session.to_json()}``."""

_LIVE_STEPS = 256
_PROVIDERS = ("openai", "anthropic")


def _newest(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any] | None:
    """Reducer: of two snapshots, keep the later one (parallel tool calls each write one)."""
    if update is None:
        return current
    if current is None or update.get("rev", 0) >= current.get("rev", 0):
        return update
    return current


class ToolManagerState(AgentState[Any]):
    """Agent state with the toolmgmt session snapshot."""

    toolmgmt: NotRequired[Annotated[dict[str, Any] | None, _newest]]
    """``{"rev": n, "session": session.to_json()}``; the highest ``rev`` wins."""


def session_tool_definitions(session: ToolSession, provider: str = "openai") -> list[Any]:
    """The session's tools as dicts every LangChain chat model accepts in ``bind_tools``.

    ``provider`` picks the core's formatting: ``"openai"`` (function dicts; at most 128 tools)
    or ``"anthropic"`` (``input_schema`` dicts; no such cap). Names are made provider-safe and
    the session resolves them back.
    """
    if provider not in _PROVIDERS:
        raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
    return list(format_tools(session, provider)["tools"])


def bind_session_tools(
    model: Any, session: ToolSession, *, provider: str = "openai", **kwargs: Any
) -> Any:
    """``model.bind_tools`` with the session's current tools; call again after each step."""
    return model.bind_tools(session_tool_definitions(session, provider), **kwargs)


def _tool_message(call: Mapping[str, Any], result: Any) -> ToolMessage:
    return ToolMessage(
        content=result.content,
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if result.is_error else "success",
    )


def run_tool_calls(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session; one ``ToolMessage`` per call."""
    return [
        _tool_message(call, session.call_sync(call["name"], call.get("args"), call_id=call["id"]))
        for call in message.tool_calls
    ]


async def arun_tool_calls(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Async :func:`run_tool_calls` (calls run one after another, in order)."""
    return [
        _tool_message(call, await session.call(call["name"], call.get("args"), call_id=call["id"]))
        for call in message.tool_calls
    ]


class _Live:
    """The session shared by the parallel tool calls of one model step."""

    def __init__(self, session: ToolSession, rev: int) -> None:
        self.session = session
        self.rev = rev
        self.lock = threading.Lock()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            self.rev += 1
            return {"rev": self.rev, "session": self.session.to_json()}


class ToolManagerMiddleware(AgentMiddleware[ToolManagerState, Any, Any]):
    """Puts a toolmgmt session between a ``create_agent`` agent and its tools.

    Args:
        manager: the catalog and its discovery configuration.
        provider: the core formatting sent to ``bind_tools`` (``"openai"`` or ``"anthropic"``,
            see :func:`session_tool_definitions`).
        instructions: append the mode's short instructions to the system message.
    """

    state_schema = ToolManagerState
    tools: Sequence[BaseTool] = ()

    def __init__(
        self, manager: ToolManager, *, provider: str = "openai", instructions: bool = True
    ) -> None:
        super().__init__()
        if not isinstance(manager, ToolManager):
            raise TypeError(
                f"ToolManagerMiddleware needs a ToolManager, got {type(manager).__name__}: "
                "ToolManagerMiddleware(ToolManager(catalog, mode='search'))."
            )
        if provider not in _PROVIDERS:
            raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
        self.manager = manager
        self.provider = provider
        self.instructions = instructions
        self._live: OrderedDict[tuple[Any, ...], _Live] = OrderedDict()
        self._lock = threading.Lock()

    # -- session state ----------------------------------------------------------------------

    def session_from_state(self, state: Mapping[str, Any]) -> ToolSession:
        """The session an agent state holds (a new one when it holds none)."""
        snapshot = state.get(STATE_KEY)
        return self.manager.session((snapshot or {}).get("session"))

    def _live_for(self, state: Mapping[str, Any], call_id: str) -> _Live:
        snapshot = state.get(STATE_KEY) or {}
        key = (_step_id(state, call_id), snapshot.get("rev", 0))
        with self._lock:
            live = self._live.get(key)
            if live is None:
                live = _Live(self.session_from_state(state), snapshot.get("rev", 0))
                self._live[key] = live
                while len(self._live) > _LIVE_STEPS:
                    self._live.popitem(last=False)
            return live

    def _manages(self, name: str, tool: BaseTool | None) -> bool:
        # Unknown names go to the session too, which answers with the closest names.
        return (
            tool is None or name in META_TOOL_NAMES or self.manager.catalog.find(name) is not None
        )

    def _answer(self, call: Mapping[str, Any], live: _Live, result: Any) -> Command[Any]:
        return Command(
            update={"messages": [_tool_message(call, result)], STATE_KEY: live.snapshot()}
        )

    # -- model calls ------------------------------------------------------------------------

    def _prepare(self, request: Any) -> Any:
        session = self.session_from_state(request.state)
        managed = session_tool_definitions(session, self.provider)
        # Provider built-ins (dicts) and framework tools outside the catalog stay as they are.
        kept = [
            t
            for t in request.tools
            if not isinstance(t, BaseTool)
            or (t.name not in META_TOOL_NAMES and self.manager.catalog.find(t.name) is None)
        ]
        overrides: dict[str, Any] = {"tools": [*managed, *kept]}
        text = session.instructions if self.instructions else ""
        if text:
            base = request.system_message.text if request.system_message else ""
            overrides["system_message"] = SystemMessage(content=f"{base}\n\n{text}".strip())
        return request.override(**overrides)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(self._prepare(request))

    # -- tool calls -------------------------------------------------------------------------

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if not self._manages(call["name"], request.tool):
            return handler(request)
        live = self._live_for(request.state, call["id"])
        return self._answer(
            call, live, live.session.call_sync(call["name"], call.get("args"), call_id=call["id"])
        )

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if not self._manages(call["name"], request.tool):
            return await handler(request)
        live = self._live_for(request.state, call["id"])
        result = await live.session.call(call["name"], call.get("args"), call_id=call["id"])
        return self._answer(call, live, result)


def _step_id(state: Mapping[str, Any], call_id: str) -> str:
    """The id of the AI message that made the call ``call_id``: one per model step."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage) and any(
            c.get("id") == call_id for c in message.tool_calls
        ):
            return str(message.id or call_id)
    return call_id


# -- ingestion ------------------------------------------------------------------------------


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
    (``ainvoke`` for async-only ones). Tools taking arguments LangChain injects at run time
    (``InjectedToolArg``, ``ToolRuntime``) only run in a ``ToolNode`` and are refused.

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
    schema: Any = tool.get_input_schema()
    full = schema.model_json_schema() if hasattr(schema, "model_json_schema") else dict(schema)
    injected = sorted(set(full.get("properties", {})) - set(parameters.get("properties", {})))
    if injected:
        raise InvalidToolError(
            f"LangChain tool {tool.name!r} takes arguments injected at run time "
            f"({', '.join(injected)}), which only LangChain's ToolNode can supply; pass it to "
            "create_agent(tools=[...]) instead of the catalog."
        )
    extra = {"annotations": ToolAnnotations.from_mapping(tool.metadata or {}), **fields}
    extra["metadata"] = {**extra.get("metadata", {}), "langchain_tool": tool}
    return Tool(
        name=function["name"],
        description=function.get("description") or "",
        parameters=parameters,
        handler=_handler(tool),
        **extra,
    )
