"""Tools for Anthropic's Messages API (``tools=[...]``).

Anthropic takes a JSON Schema in ``input_schema``; its top level must be an object schema without
``anyOf``/``oneOf``/``allOf``. Native mode uses Anthropic's tool search server tool
(``tool_search_tool_bm25_20251119`` or ``tool_search_tool_regex_20251119``): deferred tools are
sent with ``defer_loading: true`` and only the tools Claude finds are loaded into its context.

With ``code_execution`` (one of :data:`CODE_EXECUTION_TOOLS`) the application runs Claude's
programs in Anthropic's code execution tool: that tool is sent first, and each tool says who may
call it in ``allowed_callers`` (``direct``, the code execution tool, or both), mapped from the
caller choice (:class:`~toolmgmt_core.Callers`).

With ``examples`` a tool's ``input_examples`` (example argument objects, which Claude reads beside
the schema) are sent too. Anthropic refuses an example that does not match ``input_schema``, so
such an example is left out with a note rather than failing the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolmgmt_core._model.errors import ProviderError
from toolmgmt_core._model.schema_validator import example_errors
from toolmgmt_core._model.tool import Tool, is_meta_tool
from toolmgmt_core._policy.callers import CallerChoice, annotated
from toolmgmt_core._providers.schema_utils import to_json, to_single_object

__all__ = [
    "CODE_EXECUTION_TOOLS",
    "TOOL_SEARCH_TOOLS",
    "allowed_callers",
    "assemble_anthropic",
    "caller_choices",
    "to_anthropic_schema",
    "to_anthropic_tool",
]

TOOL_SEARCH_TOOLS: Mapping[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
"""Anthropic's tool search server tools, by search kind."""

CODE_EXECUTION_TOOLS = (
    "code_execution_20250825",
    "code_execution_20260120",
    "code_execution_20260521",
)
"""Anthropic's code execution tool versions whose programs call client tools (programmatic tool
calling: the values a tool's ``allowed_callers`` takes besides ``direct``)."""

_EPHEMERAL = {"type": "ephemeral"}


def allowed_callers(choice: CallerChoice, code_execution: str) -> list[str]:
    """A caller choice as Anthropic's ``allowed_callers`` of a tool."""
    if code_execution not in CODE_EXECUTION_TOOLS:
        raise ProviderError(
            f"Unknown Anthropic code execution tool {code_execution!r}; valid: "
            f"{', '.join(CODE_EXECUTION_TOOLS)}."
        )
    return {"direct": ["direct"], "code": [code_execution], "both": ["direct", code_execution]}[
        choice
    ]


def caller_choices(source: Any, tools: Sequence[Tool]) -> tuple[tuple[str, CallerChoice], ...]:
    """Who may call each tool: a session's choice (its manager's planner), else the tool's
    annotation, else direct (a meta-tool is always the model's own)."""
    planner = getattr(getattr(source, "manager", None), "planner", None)
    choose = getattr(planner, "caller_choice", None)
    out: list[tuple[str, CallerChoice]] = []
    for tool in tools:
        if is_meta_tool(tool):
            choice: CallerChoice = "direct"
        elif callable(choose):
            choice = choose(tool)
        else:
            choice = annotated(tool) or "direct"
        out.append((tool.name, choice))
    return tuple(out)


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
        name: The name to send (see :mod:`toolmgmt_core._model.provider_names`).
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
    code_execution: str | None = None,
    callers: Mapping[str, CallerChoice] | None = None,
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
        code_execution: Send this code execution tool first and each tool's
            ``allowed_callers``, from ``callers`` (original name -> choice; direct when absent).

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
        if code_execution is not None:
            choice = (callers or {}).get(original, "direct")
            item["allowed_callers"] = allowed_callers(choice, code_execution)
        tools.append(item)
    if cache_control:
        for item in reversed(tools):
            if not item.get("defer_loading"):
                item["cache_control"] = dict(_EPHEMERAL)
                break
    if native and deferred_names and server_search:
        tools.insert(0, dict(TOOL_SEARCH_TOOLS[tool_search]))
    if code_execution is not None:
        tools.insert(0, {"type": code_execution, "name": "code_execution"})
    return tools, deferred_names
