"""The session's tools bound to a LangChain chat model, and its tool calls run through the
session: for a hand-written loop (``create_agent`` users take
:class:`~toolmgmt_langchain.middleware.ToolManagerMiddleware` instead).

Every call runs as a LangChain tool run, as a bound tool's does: a meta-tool's (``tool_search``,
``discover_tools``...) and a catalog tool's that is not a LangChain tool (a function, an MCP
upstream's) are reported as one (callbacks get ``on_tool_start`` and ``on_tool_end``), so
``astream_events`` and LangSmith show discovery and every call; a LangChain tool in the catalog
reports its own run, and a tool that ``execute_tool`` runs nests under the meta-tool's
(:func:`run_tool_call`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphBubbleUp

from toolmgmt_core import CallContext, ConfigError, Tool, ToolResult, ToolSession, format_tools
from toolmgmt_core.integration import NO_CONTEXT, passthrough, tool_result_content

__all__ = [
    "PROVIDERS",
    "SIGNALS",
    "bind_session_tools",
    "run_tool_call",
    "run_tool_call_sync",
    "run_tool_calls",
    "run_tool_calls_sync",
    "session_tool_definitions",
    "tool_message",
]

PROVIDERS = ("openai", "anthropic")
"""The core formattings LangChain chat models accept in ``bind_tools``."""
SIGNALS = (GraphBubbleUp,)
"""LangGraph's control flow (``interrupt()``'s GraphInterrupt, a parent ``Command``)."""


def session_tool_definitions(
    session: ToolSession, provider: str = "openai", *, cache_control: bool = False
) -> list[Any]:
    """The session's tools as dicts every LangChain chat model accepts in ``bind_tools``.

    ``provider`` picks the core's formatting: ``"openai"`` (function dicts; at most 128 tools)
    or ``"anthropic"`` (``input_schema`` dicts; no such cap; a cache-stable session goes out
    with Anthropic's deferral, searched by toolmgmt: answer its ``tool_search`` calls with
    :func:`tool_message`, given the same ``provider``). Names are made provider-safe and the
    session resolves them back. ``cache_control``: Anthropic, a cache breakpoint after the
    tools sent up front.
    """
    if provider not in PROVIDERS:
        raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
    return list(format_tools(session, provider, cache_control=cache_control)["tools"])


def bind_session_tools(
    model: Any, session: ToolSession, *, provider: str = "openai", **kwargs: Any
) -> Any:
    """``model.bind_tools`` with the session's current tools; call again after each step."""
    return model.bind_tools(session_tool_definitions(session, provider), **kwargs)


def tool_message(
    call: Mapping[str, Any],
    result: Any,
    session: ToolSession | None = None,
    provider: str = "openai",
) -> ToolMessage:
    """The ``ToolMessage`` answering ``call`` with the session's result (with the ``session``
    and an ``anthropic`` provider, a deferred list's search answered with ``tool_reference``
    blocks)."""
    content = result.content if session is None else tool_result_content(session, result, provider)
    return ToolMessage(
        content=content,  # type: ignore[arg-type]
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if result.is_error else "success",
    )


def _reported(session: ToolSession, name: Any) -> Tool | None:
    """The tool whose run a call of ``name`` is reported as: a meta-tool, or a catalog tool
    that is not a LangChain tool (which reports its own run); None for an unknown name."""
    meta = session.meta_tool(name)
    if meta is not None:
        return meta
    tool = session.manager.catalog.find(name) if isinstance(name, str) else None
    if tool is None or "langchain_tool" in tool.metadata:
        return None
    return tool


def _as_tool_run(
    session: ToolSession, call: Mapping[str, Any], run: Callable[[], Any], *, run_async: bool
) -> StructuredTool | None:
    """A LangChain tool whose run is ``run()`` (the session's answer to ``call``), when the
    call is reported (:func:`_reported`); it answers with the ``ToolMessage`` the caller
    gets."""
    reported = _reported(session, call["name"])
    if reported is None:
        return None
    answered: dict[str, ToolResult] = {}

    def message(result: ToolResult) -> ToolMessage:
        answered["result"] = result
        return tool_message(call, result)

    def run_sync(**_: Any) -> ToolMessage:
        return message(run())

    async def run_coroutine(**_: Any) -> ToolMessage:
        return message(await run())

    return StructuredTool(
        name=reported.name,
        description=reported.description,
        args_schema=dict(reported.parameters),  # for callbacks; the session checks the call
        func=None if run_async else run_sync,
        coroutine=run_coroutine if run_async else None,
        metadata={"toolmgmt": True, "answered": answered},
    )


def _invocation(call: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "name": call["name"],
        "args": call.get("args") or {},
        "id": call["id"],
    }


def run_tool_call_sync(
    session: ToolSession,
    call: Mapping[str, Any],
    config: Any = None,
    context: CallContext = NO_CONTEXT,
) -> ToolResult:
    """One tool call through the session, as a LangChain tool run (callbacks from ``config``,
    else the run this code is in; see the module docstring), carrying ``context`` (the
    framework's approver)."""

    def run() -> ToolResult:
        return session.call_sync(
            call["name"], call.get("args"), call_id=call["id"], context=context
        )

    tool = _as_tool_run(session, call, run, run_async=False)
    if tool is None:
        return run()
    tool.invoke(_invocation(call), config)
    result: ToolResult = tool.metadata["answered"]["result"]  # type: ignore[index]
    return result


async def run_tool_call(
    session: ToolSession,
    call: Mapping[str, Any],
    config: Any = None,
    context: CallContext = NO_CONTEXT,
) -> ToolResult:
    """:func:`run_tool_call_sync` for async code."""

    def run() -> Any:
        return session.call(call["name"], call.get("args"), call_id=call["id"], context=context)

    tool = _as_tool_run(session, call, run, run_async=True)
    if tool is None:
        return await run()
    await tool.ainvoke(_invocation(call), config)
    result: ToolResult = tool.metadata["answered"]["result"]  # type: ignore[index]
    return result


def run_tool_calls_sync(
    session: ToolSession, message: AIMessage, *, provider: str = "openai"
) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session; one ``ToolMessage`` per call
    (``provider``: the formatting the tools were bound with).

    Inside a LangGraph node, an ``interrupt()`` from a tool passes through and pauses it.
    """
    with passthrough(*SIGNALS):
        return [
            tool_message(call, run_tool_call_sync(session, call), session, provider)
            for call in message.tool_calls
        ]


async def run_tool_calls(
    session: ToolSession, message: AIMessage, *, provider: str = "openai"
) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session (one after another, in order);
    :func:`run_tool_calls_sync` for sync code."""
    with passthrough(*SIGNALS):
        return [
            tool_message(call, await run_tool_call(session, call), session, provider)
            for call in message.tool_calls
        ]
