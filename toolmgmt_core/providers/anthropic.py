"""Tools for Anthropic's Messages API (``tools=[...]``).

Anthropic takes a JSON Schema in ``input_schema``; its top level must be an object schema without
``anyOf``/``oneOf``/``allOf``. Native mode uses Anthropic's tool search server tool
(``tool_search_tool_bm25_20251119`` or ``tool_search_tool_regex_20251119``): deferred tools are
sent with ``defer_loading: true`` and only the tools Claude finds are loaded into its context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolmgmt_core.errors import ProviderError
from toolmgmt_core.providers.schema_utils import to_single_object
from toolmgmt_core.tool import Tool

__all__ = [
    "TOOL_SEARCH_TOOLS",
    "assemble_anthropic",
    "to_anthropic_schema",
    "to_anthropic_tool",
]

TOOL_SEARCH_TOOLS: Mapping[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
"""Anthropic's tool search server tools, by search kind."""

_EPHEMERAL = {"type": "ephemeral"}


def to_anthropic_schema(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``parameters`` as an Anthropic ``input_schema``: one object schema at the top level.

    Returns:
        The schema and notes about lossy rewrites (a top-level union merged into one object).

    Raises:
        ProviderError: when the top level cannot be made one object schema.
    """
    return to_single_object(parameters)


def to_anthropic_tool(tool: Tool, name: str) -> tuple[dict[str, Any], list[str]]:
    """One tool as an Anthropic ``ToolParam`` dict, sent as ``name``."""
    schema, notes = to_anthropic_schema(tool.parameters)
    data: dict[str, Any] = {"name": name, "input_schema": schema}
    if tool.description:
        data["description"] = tool.description
    return data, notes


def assemble_anthropic(
    entries: Sequence[tuple[str, dict[str, Any], bool]],
    *,
    native: bool,
    tool_search: Literal["bm25", "regex"] = "bm25",
    cache_control: bool = False,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The request's ``tools`` list from converted tools.

    Args:
        entries: ``(original name, converted tool, deferred)`` per tool, in order.
        native: Add the tool search server tool and mark deferred tools ``defer_loading``.
        tool_search: Which server tool: ``bm25`` (natural-language queries) or ``regex``.
        cache_control: Put an ephemeral cache breakpoint on the last tool that is loaded up
            front (never on a deferred one).

    Returns:
        The tools and the original names actually sent deferred.
    """
    if tool_search not in TOOL_SEARCH_TOOLS:
        raise ProviderError(
            f"Unknown Anthropic tool search {tool_search!r}; valid: "
            f"{', '.join(sorted(TOOL_SEARCH_TOOLS))}."
        )
    flags = [deferred and native for _, _, deferred in entries]
    if native and flags and all(flags):
        # Anthropic refuses a request whose client tools are all deferred.
        flags[0] = False
    tools: list[dict[str, Any]] = []
    deferred_names: list[str] = []
    for (original, converted, _), deferred in zip(entries, flags, strict=True):
        item = dict(converted)
        if deferred:
            item["defer_loading"] = True
            deferred_names.append(original)
        tools.append(item)
    if cache_control:
        for item in reversed(tools):
            if not item.get("defer_loading"):
                item["cache_control"] = dict(_EPHEMERAL)
                break
    if native and deferred_names:
        tools.insert(0, dict(TOOL_SEARCH_TOOLS[tool_search]))
    return tools, deferred_names
