"""The session's tools bound to a LangChain chat model, and its tool calls run through the
session: for a hand-written loop (``create_agent`` users take
:class:`~toolmgmt_langchain.middleware.ToolManagerMiddleware` instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from toolmgmt_core.calls.control import passthrough
from toolmgmt_core.model.errors import ConfigError
from toolmgmt_core.providers import format_tools
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


def session_tool_definitions(session: ToolSession, provider: str = "openai") -> list[Any]:
    """The session's tools as dicts every LangChain chat model accepts in ``bind_tools``.

    ``provider`` picks the core's formatting: ``"openai"`` (function dicts; at most 128 tools)
    or ``"anthropic"`` (``input_schema`` dicts; no such cap). Names are made provider-safe and
    the session resolves them back.
    """
    if provider not in PROVIDERS:
        raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
    return list(format_tools(session, provider)["tools"])


def bind_session_tools(
    model: Any, session: ToolSession, *, provider: str = "openai", **kwargs: Any
) -> Any:
    """``model.bind_tools`` with the session's current tools; call again after each step."""
    return model.bind_tools(session_tool_definitions(session, provider), **kwargs)


def tool_message(call: Mapping[str, Any], result: Any) -> ToolMessage:
    """The ``ToolMessage`` answering ``call`` with the session's result."""
    return ToolMessage(
        content=result.content,
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if result.is_error else "success",
    )


def run_tool_calls_sync(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session; one ``ToolMessage`` per call.

    Inside a LangGraph node, an ``interrupt()`` from a tool passes through and pauses it.
    """
    with passthrough(*SIGNALS):
        return [
            tool_message(
                call, session.call_sync(call["name"], call.get("args"), call_id=call["id"])
            )
            for call in message.tool_calls
        ]


async def run_tool_calls(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session (one after another, in order);
    :func:`run_tool_calls_sync` for sync code."""
    with passthrough(*SIGNALS):
        return [
            tool_message(
                call, await session.call(call["name"], call.get("args"), call_id=call["id"])
            )
            for call in message.tool_calls
        ]
