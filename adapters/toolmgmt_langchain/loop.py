"""The session's tools bound to a LangChain chat model, and its tool calls run through the
session: for a hand-written loop (``create_agent`` users take
:class:`~toolmgmt_langchain.middleware.ToolManagerMiddleware` instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from toolmgmt_core.model.control import passthrough
from toolmgmt_core.model.errors import ConfigError
from toolmgmt_core.providers import format_tools
from toolmgmt_core.providers.deferral import tool_result_content
from toolmgmt_core.session.session import ToolSession

__all__ = [
    "PROVIDERS",
    "SIGNALS",
    "bind_session_tools",
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


def run_tool_calls_sync(
    session: ToolSession, message: AIMessage, *, provider: str = "openai"
) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session; one ``ToolMessage`` per call
    (``provider``: the formatting the tools were bound with).

    Inside a LangGraph node, an ``interrupt()`` from a tool passes through and pauses it.
    """
    with passthrough(*SIGNALS):
        return [
            tool_message(
                call,
                session.call_sync(call["name"], call.get("args"), call_id=call["id"]),
                session,
                provider,
            )
            for call in message.tool_calls
        ]


async def run_tool_calls(
    session: ToolSession, message: AIMessage, *, provider: str = "openai"
) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session (one after another, in order);
    :func:`run_tool_calls_sync` for sync code."""
    with passthrough(*SIGNALS):
        return [
            tool_message(
                call,
                await session.call(call["name"], call.get("args"), call_id=call["id"]),
                session,
                provider,
            )
            for call in message.tool_calls
        ]
