"""The meta-tools a session lists instead of the whole catalog, and their response shapes.

Five meta-tools, by mode:

- search: ``tool_search(query | queries, method)``: found tools join the model's tool list;
- gateway: ``discover_tools(domain?, group?, query?)``, ``get_tool_schema(tool_name |
  tool_names)``, ``execute_tool(tool_name, arguments?)``;
- lazy: ``load_tool_schema(tool_names)`` beside every tool listed without its parameters.

Meta-tools are ordinary :class:`~toolmgmt_core.Tool` objects with ``metadata={"meta":
True}`` and no handler: the session answers them. Responses are compact JSON (no spaces,
name-to-summary maps rather than lists of objects) because the model pays for every byte::

    tool_search       {"found": {name: summary}, "added": [names], "not_added": [names], "note"}
    discover_tools()  {"domains": {domain: {"tools": n, "groups": [group, ...]}}}
      (domain)        {"domain", "groups": {group: {name: summary}}}  (over browse_limit:
                      {"domain", "groups": {group: n}, "note"})
      (domain, group) {"domain", "group", "tools": {name: summary}}
      (query)         {"tools": {name: summary}}
    get_tool_schema   one definition {"name", "description", "parameters", "usage_notes",
                      "input_examples", "output_schema", "annotations"} (the last four when
                      set), or {"tools": [definitions], "errors": {name: message}} for several
    load_tool_schema  {"tools": [definitions], "errors": {name: message}}
    execute_tool      the tool's own result

Errors are ``{"error": code, "kind": "gateway" | "tool", "message"}``
(:meth:`~toolmgmt_core.ToolCallError.to_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolmgmt_core.model.tool import Tool, ToolAnnotations

__all__ = [
    "DISCOVER_TOOLS",
    "EXECUTE_TOOL",
    "GET_TOOL_SCHEMA",
    "INSTRUCTIONS",
    "LOAD_TOOL_SCHEMA",
    "META_TOOL_NAMES",
    "TOOL_SEARCH",
    "is_meta_tool",
    "meta_tools_for",
    "names_hint",
    "schema_entry",
]

MAX_QUERIES = 8
"""Most needs one ``tool_search`` call may search (each loads up to ``max_results`` tools)."""

TOOL_SEARCH = "tool_search"
DISCOVER_TOOLS = "discover_tools"
GET_TOOL_SCHEMA = "get_tool_schema"
EXECUTE_TOOL = "execute_tool"
LOAD_TOOL_SCHEMA = "load_tool_schema"

META_TOOL_NAMES: tuple[str, ...] = (
    TOOL_SEARCH,
    DISCOVER_TOOLS,
    GET_TOOL_SCHEMA,
    EXECUTE_TOOL,
    LOAD_TOOL_SCHEMA,
)
"""Every meta-tool name; a catalog tool of the same name is shadowed in the modes that use it."""

_META = {"meta": True}

_READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)

INSTRUCTIONS: Mapping[str, str] = {
    "search": (
        "Only some tools are listed. When you need a capability you do not see, call "
        "tool_search with a few words describing the need (or several needs in `queries`). "
        "The tools found are added to your tool list; call them directly on your next step. "
        "Searching again is safe."
    ),
    "gateway": (
        "Tools are reached in three steps. 1) discover_tools: no arguments lists domains; "
        "add `domain` (and `group`) to list their tools, or `query` to search by need. "
        "2) get_tool_schema(tool_name) gives parameters and examples. 3) execute_tool(tool_name, "
        'arguments) runs it. Errors of kind "gateway" mean fix the call; kind "tool" means '
        "the tool itself failed."
    ),
    "lazy": (
        "Tools are listed by name and description only. Before calling a tool for the first "
        "time, call load_tool_schema with its name (several at once is fine) to get its "
        "parameters; then call the tool directly."
    ),
    "flat": "",
}
"""A short system-prompt text per mode (about 50-80 tokens); empty when nothing is deferred."""


def _tool_search(max_results: int) -> Tool:
    return Tool(
        name=TOOL_SEARCH,
        description=(
            "Find tools by describing what you need; the best matches (up to "
            f"{max_results} per query) are added to your tool list for your next step. Use "
            "`queries` for several needs at once. Already-loaded tools are returned again."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the need."},
                "queries": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_QUERIES,
                    "description": "Several needs, searched separately.",
                },
                "method": {
                    "type": "string",
                    "enum": ["keyword", "regex"],
                    "description": "keyword (default) or regex over names and descriptions.",
                },
            },
        },
        domain="toolmgmt",
        group="meta",
        annotations=ToolAnnotations(read_only=True, open_world=False, idempotent=True),
        metadata=_META,
    )


def _discover_tools() -> Tool:
    return Tool(
        name=DISCOVER_TOOLS,
        description=(
            "Step 1 of 3: find a tool. No arguments: list domains. `domain` (and `group`): list "
            "their tools. `query`: search by need. Then get_tool_schema, then execute_tool."
        ),
        parameters={
            "type": "object",
            "properties": {
                "domain": {"type": "string"},
                "group": {"type": "string"},
                "query": {"type": "string", "description": "Words describing the need."},
            },
        },
        domain="toolmgmt",
        group="meta",
        annotations=_READ_ONLY,
        metadata=_META,
    )


def _get_tool_schema() -> Tool:
    return Tool(
        name=GET_TOOL_SCHEMA,
        description=(
            "Step 2 of 3: get a tool's parameters, examples and notes before execute_tool. "
            "Pass tool_name, or tool_names for several."
        ),
        parameters={
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "tool_names": {"type": "array", "items": {"type": "string"}},
            },
        },
        domain="toolmgmt",
        group="meta",
        annotations=_READ_ONLY,
        metadata=_META,
    )


def _execute_tool() -> Tool:
    return Tool(
        name=EXECUTE_TOOL,
        description=(
            "Step 3 of 3: run a tool found with discover_tools, with arguments matching its "
            "schema from get_tool_schema."
        ),
        parameters={
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "arguments": {"type": "object", "description": "The tool's arguments."},
            },
            "required": ["tool_name"],
        },
        domain="toolmgmt",
        group="meta",
        # It may run anything, so it claims nothing reassuring.
        annotations=ToolAnnotations(
            read_only=False, destructive=True, idempotent=False, open_world=True
        ),
        metadata=_META,
    )


def _load_tool_schema() -> Tool:
    return Tool(
        name=LOAD_TOOL_SCHEMA,
        description=(
            "Get the parameters of listed tools before calling them for the first time. Pass "
            "every name you need at once."
        ),
        parameters={
            "type": "object",
            "properties": {
                "tool_names": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["tool_names"],
        },
        domain="toolmgmt",
        group="meta",
        annotations=_READ_ONLY,
        metadata=_META,
    )


def meta_tools_for(mode: str, *, max_results: int = 5) -> list[Tool]:
    """The meta-tools a session in ``mode`` lists first ("flat" lists none)."""
    if mode == "search":
        return [_tool_search(max_results)]
    if mode == "gateway":
        return [_discover_tools(), _get_tool_schema(), _execute_tool()]
    if mode == "lazy":
        return [_load_tool_schema()]
    return []


def is_meta_tool(tool: Tool) -> bool:
    """Whether ``tool`` is one of toolmgmt's meta-tools."""
    return bool(tool.metadata.get("meta")) and tool.name in META_TOOL_NAMES


def schema_entry(tool: Tool, *, domain: bool = False) -> dict[str, Any]:
    """A full definition for a schema request: parameters plus usage notes, input examples,
    output schema and annotations when the tool has them."""
    entry = tool.to_dict(full=True)
    if domain:
        entry["domain"] = tool.domain
    return entry


def names_hint(names: Sequence[str], limit: int = 8) -> str:
    """``a, b, c`` (with ``and N more``) for an error message."""
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return f"{shown} and {more} more" if more > 0 else shown
