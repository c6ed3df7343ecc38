"""Running the tool calls of a LiteLLM response through the session, for the app's loop.

Chat Completions responses (``tool_calls``) and Responses API responses (``function_call``
items) alike; the answers come back in the same API's shape. With ``all_tools=True`` every
call gets an answer except those of the app's own tools (``app_tools``), as at every door: a
name nobody holds is answered with the closest names, so the model can correct it and the next
request is not refused for a call without an answer.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from toolmgmt_core.calls.approval import ApprovalAsker, framework_approval
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


def _app_names(app_tools: Iterable[Any]) -> frozenset[str]:
    """The names of the app's own tools: names, or tool definitions (OpenAI's Chat or
    Responses shape, or Anthropic's).

    Raises:
        TypeError: an entry is neither.
    """
    names = set()
    for tool in [app_tools] if isinstance(app_tools, str) else app_tools:
        if isinstance(tool, str):
            names.add(tool)
            continue
        function = field_of(tool, "function") if isinstance(tool, Mapping) else None
        name = field_of(function, "name") if function is not None else field_of(tool, "name")
        if not isinstance(name, str):
            raise TypeError(
                "app_tools takes the names of the app's own tools, or their definitions "
                f'({{"type": "function", "function": {{"name": ...}}}}), got {tool!r:.80}.'
            )
        names.add(name)
    return frozenset(names)


def _calls(
    response: Any, all_tools: bool, app_tools: Collection[str]
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
        if name in META_TOOL_NAMES or (all_tools and name not in app_tools)
    ]


def _message(call_id: str, name: str, result: Any, responses: bool) -> dict[str, Any]:
    if responses:
        return {"type": "function_call_output", "call_id": call_id, "output": result.content}
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": result.content}


def run_meta_tool_calls_sync(
    session: ToolSession,
    response: Any,
    *,
    all_tools: bool = False,
    approve: ApprovalAsker | None = None,
    app_tools: Iterable[Any] = (),
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls (every call with ``all_tools``) through the session.

    A call that needs approval (a destructive tool, or a policy step's ``require_approval``)
    asks the manager's approval callback, else ``approve`` (the app's own way of asking its
    user, sync or async, given an :class:`~toolmgmt_core.ApprovalRequest`); with neither it is
    refused, as at every door (opt out with ``ToolManager(approval=Approval(destructive=False))``).

    Args:
        session: the conversation's session.
        response: a LiteLLM ``ModelResponse`` (or its message, or their dict forms), or a
            Responses API response (``litellm.responses``).
        all_tools: also run every other call but those of ``app_tools``: catalog tools by
            exact, folded or provider-shortened name, loaded or not (the session refuses what
            the model may not call), and a name nobody holds (``unknown_tool``, with the
            closest names).
        approve: asked about a call that needs approval when the manager has no callback.
        app_tools: the app's own tools, outside the catalog (their names, or the definitions
            the app sends in ``tools``): their calls are left out, for the app to answer.

    Returns:
        One ``{"role": "tool", ...}`` message per call run, in call order (for a Responses API
        response, ``{"type": "function_call_output", ...}`` input items).

    Raises:
        TypeError: an entry of ``app_tools`` is neither a name nor a tool definition.
    """
    calls = _calls(response, all_tools, _app_names(app_tools))
    with framework_approval(approve):
        return [
            _message(call_id, name, session.call_sync(name, arguments, call_id=call_id), responses)
            for call_id, name, arguments, responses in calls
        ]


async def run_meta_tool_calls(
    session: ToolSession,
    response: Any,
    *,
    all_tools: bool = False,
    approve: ApprovalAsker | None = None,
    app_tools: Iterable[Any] = (),
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls through the session (:func:`run_meta_tool_calls_sync`
    for sync code)."""
    calls = _calls(response, all_tools, _app_names(app_tools))
    with framework_approval(approve):
        return [
            _message(call_id, name, await session.call(name, arguments, call_id=call_id), responses)
            for call_id, name, arguments, responses in calls
        ]
