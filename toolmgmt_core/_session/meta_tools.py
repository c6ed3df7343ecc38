"""The meta-tools a session lists instead of the whole catalog, and their response shapes.

Seven meta-tools, by mode:

- search: ``tool_search(query | queries, method)`` answers with the found tools' definitions and
  ``call_tool(tool_name, arguments)`` runs one, so the tool list never changes (with
  ``Search(appends=True)``, found tools join the list instead and there is no ``call_tool``);
- gateway: ``discover_tools(domain?, group?, query?)``, ``get_tool_schema(tool_name |
  tool_names)``, ``execute_tool(tool_name, arguments?)``;
- lazy: ``load_tool_schema(tool_names)`` beside every tool listed without its parameters;
- code: ``tool_search`` answering with Python signatures and ``run_code(code)`` running a
  program that calls tools (:mod:`toolmgmt_core._session.code_calls`).

Meta-tools are ordinary :class:`~toolmgmt_core.Tool` objects with ``metadata={"meta":
True}`` and no handler: the session answers them. Responses are compact JSON (no spaces,
name-to-summary maps rather than lists of objects) because the model pays for every byte::

    tool_search       {"found": {name: definition}, "note"} (the list stays as it is), or with
                      Search(appends=True) {"found": {name: summary}, "added": [names],
                      "not_added": [names], "note"}
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
    call_tool         the tool's own result
    tool_search       (code mode) Python text, not JSON: a signature per found tool, then
                      "# Often used with them:" and its signatures, or a "# note"
    run_code          what the program printed, then its last expression

Errors are ``{"error": code, "kind": "call" | "tool", "message"}``
(:meth:`~toolmgmt_core.ToolCallError.to_dict`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from toolmgmt_core._model.tool import (
    CALL_TOOL,
    DISCOVER_TOOLS,
    EXECUTE_TOOL,
    GET_TOOL_SCHEMA,
    LOAD_TOOL_SCHEMA,
    META_TOOL_NAMES,
    RUN_CODE,
    TOOL_SEARCH,
    Tool,
    ToolAnnotations,
    is_meta_tool,
)

__all__ = [
    "CALL_TOOL",
    "DISCOVER_TOOLS",
    "EXECUTE_TOOL",
    "GET_TOOL_SCHEMA",
    "LOAD_TOOL_SCHEMA",
    "MAX_QUERIES",
    "META_TOOL_NAMES",
    "RUN_CODE",
    "TOOL_SEARCH",
    "call_tool_tool",
    "code_search_tool",
    "discover_tools_tool",
    "execute_tool_tool",
    "get_tool_schema_tool",
    "is_meta_tool",
    "load_tool_schema_tool",
    "run_code_tool",
    "schema_entry",
    "stable_search_tool",
    "tool_search_tool",
]

MAX_QUERIES = 8
"""Most needs one ``tool_search`` call may search (each loads up to ``max_results`` tools)."""

_META = {"meta": True}

_READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)
_RUNS_ANYTHING = ToolAnnotations(
    read_only=False, destructive=True, idempotent=False, open_world=True
)
"""A meta-tool that may run anything claims nothing reassuring."""


def _meta_tool(
    name: str,
    description: str,
    parameters: dict[str, Any],
    annotations: ToolAnnotations = _READ_ONLY,
) -> Tool:
    """A meta-tool: in the ``toolmgmt`` domain's ``meta`` group, marked ``{"meta": True}``."""
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        domain="toolmgmt",
        group="meta",
        annotations=annotations,
        metadata=_META,
    )


def _runner_tool(name: str, description: str) -> Tool:
    """``call_tool`` or ``execute_tool``: runs a catalog tool by name with its arguments."""
    parameters = {
        "type": "object",
        "properties": {
            "tool_name": {"type": "string"},
            "arguments": {"type": "object", "description": "The tool's arguments."},
        },
        "required": ["tool_name"],
    }
    return _meta_tool(name, description, parameters, _RUNS_ANYTHING)


def _search_parameters() -> dict[str, Any]:
    return {
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
    }


_SEARCH_ANNOTATIONS = ToolAnnotations(read_only=True, open_world=False, idempotent=True)


@lru_cache(maxsize=32)
def tool_search_tool(max_results: int) -> Tool:
    """``tool_search`` of ``Search(appends=True)``: what it finds joins the tool list."""
    return _search_tool(
        "Find tools by describing what you need; the best matches (up to "
        f"{max_results} per query) are added to your tool list for your next step. Use "
        "`queries` for several needs at once. Already-loaded tools are returned again."
    )


def _search_tool(description: str) -> Tool:
    """A ``tool_search`` taking ``queries``, as every mode that searches lists it."""
    return _meta_tool(TOOL_SEARCH, description, _search_parameters(), _SEARCH_ANNOTATIONS)


@lru_cache(maxsize=32)
def stable_search_tool(max_results: int) -> Tool:
    """``tool_search`` of the cache-stable search: it answers with definitions and the tool
    list stays as it is (a provider's native deferral loads them instead, see
    :mod:`toolmgmt_core._providers.deferral`)."""
    return _search_tool(
        f"Find tools by describing what you need: gives the best matches (up to {max_results} "
        "per query) with their parameters. Put every need of the task in `queries` at once."
    )


@lru_cache(maxsize=32)
def call_tool_tool() -> Tool:
    """``call_tool``: runs a tool ``tool_search`` found, which stays out of the tool list."""
    return _runner_tool(
        CALL_TOOL,
        "Run a tool that tool_search found, with arguments matching the parameters it gave.",
    )


@lru_cache(maxsize=32)
def discover_tools_tool() -> Tool:
    return _meta_tool(
        DISCOVER_TOOLS,
        "Step 1 of 3: find a tool. No arguments: list domains. `domain` (and `group`): list "
        "their tools. `query`: search by need. Then get_tool_schema, then execute_tool.",
        {
            "type": "object",
            "properties": {
                "domain": {"type": "string"},
                "group": {"type": "string"},
                "query": {"type": "string", "description": "Words describing the need."},
            },
        },
    )


@lru_cache(maxsize=32)
def get_tool_schema_tool() -> Tool:
    return _meta_tool(
        GET_TOOL_SCHEMA,
        "Step 2 of 3: get a tool's parameters, examples and notes before execute_tool. "
        "Pass tool_name, or tool_names for several.",
        {
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "tool_names": {"type": "array", "items": {"type": "string"}},
            },
        },
    )


@lru_cache(maxsize=32)
def execute_tool_tool() -> Tool:
    return _runner_tool(
        EXECUTE_TOOL,
        "Step 3 of 3: run a tool found with discover_tools, with arguments matching its "
        "schema from get_tool_schema.",
    )


@lru_cache(maxsize=32)
def load_tool_schema_tool() -> Tool:
    return _meta_tool(
        LOAD_TOOL_SCHEMA,
        "Get the parameters of listed tools before calling them for the first time. Pass "
        "every name you need at once.",
        {
            "type": "object",
            "properties": {
                "tool_names": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["tool_names"],
        },
    )


@lru_cache(maxsize=32)
def code_search_tool(max_results: int) -> Tool:
    """``tool_search`` of code mode: it answers with Python signatures to call from run_code."""
    return _search_tool(
        f"Find tools by need: the best matches (up to {max_results} per query) as Python "
        "signatures to call in run_code. Put every need in `queries`."
    )


@lru_cache(maxsize=32)
def run_code_tool() -> Tool:
    """``run_code``: a Python program calling tools in a sandbox; only its output comes back."""
    return _meta_tool(
        RUN_CODE,
        "Run an async Python program in a sandbox (no files or network; imports: json, re, "
        "math, datetime, asyncio). `await name(arg=...)` calls a tool listed here or shown "
        "by tool_search and returns its whole value, JSON parsed; a failed call raises. "
        "`import asyncio` to `await asyncio.gather(...)` calls at once; `await "
        "search_tools(query)` finds more. Only what you print and the last expression come "
        "back, long output cut: summarize in the program.",
        {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The program."}},
            "required": ["code"],
        },
        _RUNS_ANYTHING,
    )


def schema_entry(tool: Tool, *, domain: bool = False) -> dict[str, Any]:
    """A full definition for a schema request: parameters plus usage notes, input examples,
    output schema and annotations when the tool has them."""
    entry = tool.to_dict(full=True)
    if domain:
        entry["domain"] = tool.domain
    return entry
