"""The cache-stable search sent with a provider's native deferral, toolmgmt's search kept.

A session in the cache-stable search mode (``Search()``, the default) lists ``tool_search`` and
``call_tool`` beside its always-on tools, and that list never changes. Where the provider can
defer loading, :func:`~toolmgmt_core.format_tools` sends it natively instead (``native=None``,
the default; ``native=False`` opts out and sends the list as it is):

- **Anthropic Messages**: ``tool_search`` as an ordinary client tool, the always-on tools, and
  every other visible tool with ``defer_loading: true`` (deferred tools are not part of the
  cached prefix). A search's answer is a ``tool_result`` whose content is ``tool_reference``
  blocks (:func:`search_result_content`): the referenced definitions load inline, where the
  result is, and the model calls them natively; ``tools`` stays byte-identical.
- **OpenAI Responses**: a client-executed ``{"type": "tool_search", "execution": "client"}``
  tool and the always-on tools; no deferred tool is declared. The model emits
  ``tool_search_call`` items; the client answers each with a ``tool_search_output`` carrying
  the found tools' definitions (:func:`search_output_item`), which OpenAI adds at the end of
  the context.

Either way the ranking, the policy and the session's record are toolmgmt's (the session answers
``tool_search``), no ``call_tool`` is sent (found tools are called by their own names), and the
provider's own search tool is not sent either (one search tool at a time).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolmgmt_core._model.provider_names import provider_name
from toolmgmt_core._model.tool import CALL_TOOL, TOOL_SEARCH, Tool, is_meta_tool
from toolmgmt_core._providers.cache import convert

__all__ = [
    "CLIENT_SEARCH_DESCRIPTION",
    "NATIVE_DEFERRAL",
    "client_search_entry",
    "client_search_tool",
    "found_tools",
    "is_search_call",
    "native_deferral_tools",
    "search_arguments",
    "search_output_item",
    "search_result_content",
    "tool_result_content",
    "uses_native_deferral",
]

NATIVE_DEFERRAL = frozenset({"anthropic", "openai-responses"})
"""Providers whose deferred loading a client-side search can drive."""

CLIENT_SEARCH_DESCRIPTION = (
    "Find tools by describing what you need; the best matches are loaded for your next step "
    "and you call them directly. Put every need of the task in `queries` at once."
)
"""``tool_search``'s description when its answer loads the tools natively."""


def uses_native_deferral(source: Any, provider: str, native: bool | None) -> bool:
    """Whether ``format_tools`` sends ``source`` with the provider's deferral and toolmgmt's
    search: a session in the cache-stable search mode, a provider that defers, and ``native``
    left to its default (None)."""
    if native is not None or provider not in NATIVE_DEFERRAL:
        return False
    mode = getattr(source, "effective_mode", None)
    return bool(getattr(mode, "stable_search", False))


def client_search_tool(search: Tool) -> Tool:
    """The session's ``tool_search`` as the client-side search of a native deferral."""
    return search.replace(description=CLIENT_SEARCH_DESCRIPTION)


def native_deferral_tools(source: Any, provider: str) -> tuple[list[Tool], set[str]]:
    """The tools of a natively deferred request and the names sent deferred.

    ``tool_search`` (its description saying that what it finds is loaded), the session's other
    listed tools but ``call_tool``, then, for Anthropic, every other visible tool deferred.
    """
    listed = list(source.tools())
    search = [client_search_tool(t) for t in listed if t.name == TOOL_SEARCH and is_meta_tool(t)]
    kept = [t for t in listed if not is_meta_tool(t)]
    if provider != "anthropic":
        return [*search, *kept], set()
    names = {t.name for t in listed}
    rest = [t for t in source.visible_tools() if t.name not in names and t.name != CALL_TOOL]
    return [*search, *kept, *rest], {t.name for t in rest}


def client_search_entry(data: Mapping[str, Any]) -> dict[str, Any]:
    """A formatted Responses ``tool_search`` function as a client-executed ``tool_search``."""
    return {
        "type": "tool_search",
        "execution": "client",
        "description": data.get("description") or CLIENT_SEARCH_DESCRIPTION,
        "parameters": data.get("parameters") or {"type": "object", "properties": {}},
    }


def found_tools(result: Any) -> list[Tool]:
    """The tools a cache-stable ``tool_search`` answer gave (``{"found": {name:
    definition}}``), as tools; none for an error or an answer of another shape."""
    value = getattr(result, "value", None)
    if getattr(result, "is_error", False) or not isinstance(value, Mapping):
        return []
    found = value.get("found")
    if not isinstance(found, Mapping):
        return []
    tools = []
    for name, entry in found.items():
        if isinstance(name, str) and isinstance(entry, Mapping):
            tools.append(
                Tool(
                    name=name,
                    description=str(entry.get("description") or ""),
                    parameters=entry.get("parameters") or {"type": "object", "properties": {}},
                )
            )
    return tools


def _sent_name(name: str, provider: str, names: Mapping[str, str] | None) -> str:
    """The name ``name`` went out as: from a request's ``report.name_map`` (sent -> original)
    when given, else the provider-safe form."""
    if names:
        for sent, original in names.items():
            if original == name:
                return sent
    return provider_name(name, "openai" if provider.startswith("openai") else provider)


def search_result_content(
    result: Any, *, names: Mapping[str, str] | None = None
) -> str | list[dict[str, Any]]:
    """Anthropic: the ``tool_result`` content answering a ``tool_search`` call of a natively
    deferred request: one ``tool_reference`` per tool found, or the session's text when it
    found none or failed (the note says what to try).

    Args:
        result: the session's answer (a ``ToolResult``).
        names: the request's ``report.name_map``, when its names were shortened.
    """
    found = found_tools(result)
    if not found:
        return str(getattr(result, "content", ""))
    return [
        {"type": "tool_reference", "tool_name": _sent_name(t.name, "anthropic", names)}
        for t in found
    ]


def search_output_item(result: Any, call_id: str, *, strict: bool = False) -> dict[str, Any]:
    """OpenAI Responses: the ``tool_search_output`` item answering a client-executed
    ``tool_search_call`` (``call_id``): the found tools' definitions, formatted as the request's
    own tools are (none when the search found nothing; one that cannot be formatted is left
    out)."""
    tools = []
    for tool in found_tools(result):
        name = _sent_name(tool.name, "openai-responses", None)
        converted = convert(tool, "openai-responses", name, (strict, False, False))
        if converted.data is not None:
            tools.append(converted.data)
    return {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    }


def search_arguments(item: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a Responses ``tool_search_call`` item (an object, or its JSON text)."""
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return dict(arguments) if isinstance(arguments, Mapping) else {}


def is_search_call(item: Any) -> bool:
    """Whether ``item`` is a client-executed Responses ``tool_search_call``."""
    return (
        isinstance(item, Mapping)
        and item.get("type") == "tool_search_call"
        and item.get("execution") == "client"
    )


def tool_result_content(session: Any, result: Any, provider: str) -> str | list[dict[str, Any]]:
    """What an integration puts in the tool result answering ``result`` for ``provider``: a search's
    ``tool_reference`` blocks when ``format_tools`` sent the session with Anthropic's deferral
    (its default for a cache-stable session), else the session's text."""
    if (
        provider == "anthropic"
        and getattr(result, "tool_name", None) == TOOL_SEARCH
        and uses_native_deferral(session, provider, None)
    ):
        return search_result_content(result)
    return str(getattr(result, "content", ""))
