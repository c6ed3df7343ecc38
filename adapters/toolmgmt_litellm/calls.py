"""Running the tool calls of a LiteLLM response through the session, for the app's loop.

Chat Completions responses (``tool_calls``) and Responses API responses (``function_call``
items, and the ``tool_search_call`` items of a client-executed search) alike; the answers come
back in the same API's shape. Where the callback sent the session with the provider's deferral
(Anthropic models, OpenAI's Responses API), ``tool_search`` is answered natively: Anthropic
``tool_reference`` blocks, a Responses ``tool_search_output`` carrying the definitions. With
``all_tools=True`` every call gets an answer except those of the app's own tools
(``app_tools``), as through every integration: a name nobody holds is answered with the closest
names, so the model can correct it and the next request is not refused for a call without an answer.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import litellm

from toolmgmt_core import CallContext, ToolSession, search_output_item
from toolmgmt_core.integration import (
    META_TOOL_NAMES,
    TOOL_SEARCH,
    ApprovalAsker,
    is_search_call,
    search_arguments,
    tool_result_content,
)

__all__ = [
    "deferral_for",
    "field_of",
    "llm_provider",
    "run_meta_tool_calls",
    "run_meta_tool_calls_sync",
    "target_shape",
]


_NATIVE_SHAPES = {"anthropic": "anthropic"}
"""LiteLLM providers that take toolmgmt's own format as is; the rest get OpenAI's."""


def llm_provider(kwargs: Mapping[str, Any]) -> str:
    """The LiteLLM provider a request (its ``model``, ``custom_llm_provider``) goes to."""
    try:
        _, provider, _, _ = litellm.get_llm_provider(
            model=str(kwargs.get("model", "")),
            custom_llm_provider=kwargs.get("custom_llm_provider"),
        )
    except Exception:  # an unknown model name: LiteLLM itself will report it
        provider = str(kwargs.get("model", "")).partition("/")[0]
    return str(provider)


def target_shape(kwargs: Mapping[str, Any], api: str = "chat") -> str:
    """The core formatting a request's tools take: ``openai-responses`` for the Responses API,
    Anthropic's own shape for Anthropic models, OpenAI's (which LiteLLM translates) else."""
    if api == "responses":
        return "openai-responses"
    return _NATIVE_SHAPES.get(llm_provider(kwargs), "openai")


def deferral_for(kwargs: Mapping[str, Any], api: str) -> bool | None:
    """``format_tools``'s ``native``: its default (the provider's deferral for a cache-stable
    session) where the request reaches that provider's own API; else the list as it is
    (LiteLLM refuses a client ``tool_search`` on a route that cannot run it)."""
    if api == "responses":
        return None if llm_provider(kwargs) == "openai" else False
    return None


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


def _item(item: Any) -> Any:
    dump = getattr(item, "model_dump", None)
    return dump() if callable(dump) else item


def _calls(
    response: Any, all_tools: bool, app_tools: Collection[str]
) -> list[tuple[str, str, Any, str]]:
    """``(call id, name, arguments, kind)`` of each call to run; kind ``chat``, ``responses``
    or ``tool_search_call`` (a Responses search the client executes)."""
    output = field_of(response, "output")
    if isinstance(output, list):  # a Responses API response: function_call items
        listed = []
        for raw in output:
            item = _item(raw)
            if is_search_call(item):
                listed.append((str(item.get("call_id")), TOOL_SEARCH, search_arguments(item)))
            elif field_of(item, "type") == "function_call":
                listed.append(
                    (
                        str(field_of(item, "call_id")),
                        str(field_of(item, "name")),
                        field_of(item, "arguments"),
                    )
                )
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
    kinds = {
        call_id: "tool_search_call"
        if isinstance(output, list) and isinstance(arguments, dict)
        else ""
        for call_id, name, arguments in listed
        if name == TOOL_SEARCH
    }
    default = "responses" if isinstance(output, list) else "chat"
    return [
        (call_id, name, arguments, kinds.get(call_id) or default)
        for call_id, name, arguments in listed
        if name in META_TOOL_NAMES or (all_tools and name not in app_tools)
    ]


def _shape(response: Any, model: str | None) -> str:
    """The shape the request went out in (``anthropic`` for Anthropic models): the request's
    model when given, else the one LiteLLM notes on its response (the model and provider it
    sent the request to), else the response's own ``model``, which a proxy's alias or a mock
    may name differently from the request."""
    if not model:
        sent = getattr(response, "hidden_params", None)  # LiteLLM's public name for them
        if isinstance(sent, Mapping) and isinstance(sent.get("litellm_model_name"), str):
            request = {
                "model": sent["litellm_model_name"],
                "custom_llm_provider": sent.get("custom_llm_provider"),
            }
            return target_shape(request)
    name = model or field_of(response, "model")
    return target_shape({"model": name}) if isinstance(name, str) and name else "openai"


def _message(
    session: ToolSession, call_id: str, name: str, result: Any, kind: str, shape: str
) -> dict[str, Any]:
    if kind == "tool_search_call":
        return search_output_item(result, call_id)
    if kind == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": result.content}
    content = tool_result_content(session, result, shape)
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def _messages(
    session: ToolSession,
    calls: list[tuple[str, str, Any, str]],
    results: list[Any],
    shape: str,
) -> list[dict[str, Any]]:
    return [
        _message(session, call_id, name, result, kind, shape)
        for (call_id, name, _, kind), result in zip(calls, results, strict=True)
    ]


def run_meta_tool_calls_sync(
    session: ToolSession,
    response: Any,
    *,
    all_tools: bool = False,
    approve: ApprovalAsker | None = None,
    model: str | None = None,
    app_tools: Iterable[Any] = (),
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls (every call with ``all_tools``) through the session.

    A call that needs approval (a destructive tool, or a policy step's ``require_approval``)
    asks the manager's approval callback, else ``approve`` (the app's own way of asking its
    user, sync or async, given an :class:`~toolmgmt_core.ApprovalRequest`); with neither it is
    refused, as through every integration (opt out with
    ``ToolManager(approval=Approval(destructive=False))``).

    Args:
        session: the conversation's session.
        response: a LiteLLM ``ModelResponse`` (or its message, or their dict forms), or a
            Responses API response (``litellm.responses``).
        all_tools: also run every other call but those of ``app_tools``: catalog tools by
            exact, folded or provider-shortened name, loaded or not (the session refuses what
            the model may not call), and a name nobody holds (``unknown_tool``, with the
            closest names).
        approve: asked about a call that needs approval when the manager has no callback.
        model: the model the request named (default: the one LiteLLM sent the request to, as
            its response notes, else the response's ``model``): for an Anthropic model,
            ``tool_search`` is answered with ``tool_reference`` blocks, as the callback sent
            the tools deferred.
        app_tools: the app's own tools, outside the catalog (their names, or the definitions
            the app sends in ``tools``): their calls are left out, for the app to answer.

    Returns:
        One ``{"role": "tool", ...}`` message per call run, in call order (for a Responses API
        response, ``{"type": "function_call_output", ...}`` input items, and a
        ``tool_search_output`` for each client-executed ``tool_search_call``).

    Raises:
        TypeError: an entry of ``app_tools`` is neither a name nor a tool definition.
    """
    calls = _calls(response, all_tools, _app_names(app_tools))
    shape = _shape(response, model)
    context = CallContext(approver=approve)
    results = [
        session.call_sync(name, arguments, call_id=call_id, context=context)
        for call_id, name, arguments, _ in calls
    ]
    return _messages(session, calls, results, shape)


async def run_meta_tool_calls(
    session: ToolSession,
    response: Any,
    *,
    all_tools: bool = False,
    approve: ApprovalAsker | None = None,
    model: str | None = None,
    app_tools: Iterable[Any] = (),
) -> list[dict[str, Any]]:
    """Run a response's meta-tool calls through the session (:func:`run_meta_tool_calls_sync`
    for sync code)."""
    calls = _calls(response, all_tools, _app_names(app_tools))
    shape = _shape(response, model)
    context = CallContext(approver=approve)
    results = [
        await session.call(name, arguments, call_id=call_id, context=context)
        for call_id, name, arguments, _ in calls
    ]
    return _messages(session, calls, results, shape)
