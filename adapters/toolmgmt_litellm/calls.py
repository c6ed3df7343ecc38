"""Running the tool calls of a LiteLLM response through the session, for the app's loop.

Chat Completions responses (``tool_calls``) and Responses API responses (``function_call``
items) alike; the answers come back in the same API's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolmgmt_core.providers import resolve_provider_name
from toolmgmt_core.session.meta_tools import META_TOOL_NAMES
from toolmgmt_core.session.session import ToolSession

__all__ = [
    "field_of",
    "run_meta_tool_calls",
    "run_meta_tool_calls_sync",
]


def field_of(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, else ``obj.name`` (LiteLLM's objects or their dicts)."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _knows(session: ToolSession, name: str) -> bool:
    catalog = session.manager.catalog
    if name in META_TOOL_NAMES or catalog.find(name) is not None:
        return True
    return resolve_provider_name(name, catalog.names()) is not None


def _calls(
    session: ToolSession, response: Any, all_tools: bool
) -> list[tuple[str, str, Any, bool]]:
    """``(call id, name, arguments, from the Responses API)`` of each call to run."""
    output = field_of(response, "output")
    if isinstance(output, list):  # a Responses API response: function_call items
        listed = [
            (
                str(field_of(item, "call_id")),
                str(field_of(item, "name")),
                field_of(item, "arguments"),
            )
            for item in output
            if field_of(item, "type") == "function_call"
        ]
    else:
        choices = field_of(response, "choices")
        message = field_of(choices[0], "message") if choices else response
        listed = [
            (
                str(field_of(call, "id")),
                str(field_of(field_of(call, "function"), "name")),
                field_of(field_of(call, "function"), "arguments"),
            )
            for call in field_of(message, "tool_calls") or []
        ]
    return [
        (call_id, name, arguments, isinstance(output, list))
        for call_id, name, arguments in listed
        if name in META_TOOL_NAMES or (all_tools and _knows(session, name))
    ]


def _message(call_id: str, name: str, result: Any, responses: bool) -> dict[str, Any]:
    if responses:
        return {"type": "function_call_output", "call_id": call_id, "output": result.content}
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": result.content}


def run_meta_tool_calls_sync(
    session: ToolSession, response: Any, *, all_tools: bool = False
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls (every call with ``all_tools``) through the session.

    Args:
        session: the conversation's session.
        response: a LiteLLM ``ModelResponse`` (or its message, or their dict forms), or a
            Responses API response (``litellm.responses``).
        all_tools: also run calls of catalog tools (by exact, folded or provider-shortened
            name), whether loaded or not: the session refuses what the model may not call.

    Returns:
        One ``{"role": "tool", ...}`` message per call run, in call order (for a Responses API
        response, ``{"type": "function_call_output", ...}`` input items). Calls of names the
        catalog does not hold (the app's own tools, or a misspelt name) are left out, for the
        app to answer.
    """
    return [
        _message(call_id, name, session.call_sync(name, arguments, call_id=call_id), responses)
        for call_id, name, arguments, responses in _calls(session, response, all_tools)
    ]


async def run_meta_tool_calls(
    session: ToolSession, response: Any, *, all_tools: bool = False
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls through the session (:func:`run_meta_tool_calls_sync`
    for sync code)."""
    return [
        _message(call_id, name, await session.call(name, arguments, call_id=call_id), responses)
        for call_id, name, arguments, responses in _calls(session, response, all_tools)
    ]
