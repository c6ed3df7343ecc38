"""Tools for Anthropic's Messages API (``tools=[...]``).

Anthropic takes a JSON Schema in ``input_schema``; its top level must be an object schema without
``anyOf``/``oneOf``/``allOf``. Native mode uses Anthropic's tool search server tool
(``tool_search_tool_bm25_20251119`` or ``tool_search_tool_regex_20251119``): deferred tools are
sent with ``defer_loading: true`` and only the tools Claude finds are loaded into its context.

With ``examples`` a tool's ``input_examples`` (example argument objects, which Claude reads beside
the schema) are sent too. Anthropic refuses an example that does not match ``input_schema``, so
such an example is left out with a note rather than failing the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolmgmt_core.model.errors import ProviderError
from toolmgmt_core.model.schema_validator import example_errors
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.providers.schema_utils import to_json, to_single_object

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


def to_anthropic_tool(
    tool: Tool, name: str, *, examples: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """One tool as an Anthropic ``ToolParam`` dict, sent as ``name``.

    Args:
        tool: The tool.
        name: The name to send (see :mod:`toolmgmt_core.model.provider_names`).
        examples: Send ``tool.input_examples`` as ``input_examples`` (those that match the
            input schema; the others are left out with a note).
    """
    schema, notes = to_anthropic_schema(tool.parameters)
    data: dict[str, Any] = {"name": name, "input_schema": schema}
    if tool.description:
        data["description"] = tool.description
    if examples and tool.input_examples:
        kept, dropped = _valid_examples(tool.input_examples, schema)
        notes.extend(dropped)
        if kept:
            data["input_examples"] = kept
    return data, notes


def _valid_examples(
    examples: Sequence[Mapping[str, Any]], schema: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    kept: list[dict[str, Any]] = []
    notes: list[str] = []
    values = [to_json(example) for example in examples]
    errors = iter(example_errors(schema, [v for v in values if isinstance(v, dict)]))
    for index, value in enumerate(values, 1):
        error = next(errors) if isinstance(value, dict) else None
        if isinstance(value, dict) and error is None:
            kept.append(value)
            continue
        where = "/".join(str(p) for p in error[0]) if error else ""
        why = f"{where or '(arguments)'}: {error[1]}" if error else "not an object"
        notes.append(f"input example {index} left out: it does not match the schema ({why})")
    return kept, notes


def assemble_anthropic(
    entries: Sequence[tuple[str, dict[str, Any], bool]],
    *,
    native: bool,
    tool_search: Literal["bm25", "regex"] = "bm25",
    cache_control: bool = False,
    server_search: bool = True,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The request's ``tools`` list from converted tools.

    Args:
        entries: ``(original name, converted tool, deferred)`` per tool, in order.
        native: Add the tool search server tool and mark deferred tools ``defer_loading``.
        tool_search: Which server tool: ``bm25`` (natural-language queries) or ``regex``.
        cache_control: Put an ephemeral cache breakpoint on the last tool that is loaded up
            front (never on a deferred one).
        server_search: Add Anthropic's tool search server tool when some tool is deferred;
            False when the client's own search tool loads them (``tool_reference`` results).

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
    if native and deferred_names and server_search:
        tools.insert(0, dict(TOOL_SEARCH_TOOLS[tool_search]))
    return tools, deferred_names
