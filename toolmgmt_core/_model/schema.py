"""Turning foreign tool definitions into :class:`~toolmgmt_core.Tool` objects: dicts in the
shapes the ecosystem uses (Python functions are :mod:`toolmgmt_core._model.signatures`' part):

- plain ``{"name", "description", "parameters"}``;
- OpenAI Chat Completions ``{"type": "function", "function": {...}}``;
- OpenAI Responses ``{"type": "function", "name", "description", "parameters"}``;
- Anthropic ``{"name", "description", "input_schema"}``;
- MCP ``{"name", "description", "inputSchema", "outputSchema", "annotations"}``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolmgmt_core._model.errors import InvalidToolError
from toolmgmt_core._model.signatures import function_schema
from toolmgmt_core._model.tool import Tool, ToolAnnotations

__all__ = ["function_schema", "resolve_pointer", "tool_from_dict", "tool_to_definition"]

# function_schema lives in toolmgmt_core._model.signatures; kept importable from here.

_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")


def tool_from_dict(data: Mapping[str, Any], **defaults: Any) -> Tool:
    """A :class:`Tool` from a definition dict in any accepted shape.

    ``defaults`` (domain, group, handler, ...) fill fields the dict does not set itself.

    Raises:
        InvalidToolError: naming the tool and the shapes that are accepted.
    """
    if not isinstance(data, Mapping):
        raise InvalidToolError(
            f"A tool definition must be a dict, got {type(data).__name__}. Accepted shapes: "
            '{"name", "description", "parameters"}, OpenAI {"type": "function", "function": '
            '{...}}, Anthropic {"input_schema"} and MCP {"inputSchema"}.'
        )
    body: Mapping[str, Any] = data
    if isinstance(data.get("function"), Mapping):
        body = data["function"]
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidToolError(
            f"A tool definition has no name (keys: {sorted(body)}). Every tool needs a "
            "non-empty 'name'."
        )
    schema: Any = None
    for key in _SCHEMA_KEYS:
        if key in body:
            schema = body[key]
            break
    if schema is None:
        schema = {"type": "object", "properties": {}}
    fields: dict[str, Any] = dict(defaults)
    fields["name"] = name
    fields["description"] = body.get("description") or ""
    fields["parameters"] = schema
    for key in (
        "domain",
        "group",
        "keywords",
        "profiles",
        "usage_notes",
        "timeout",
        "max_result_tokens",
        "truncation",
        "max_concurrency",
    ):
        if body.get(key) is not None:
            fields[key] = body[key]
    if body.get("defer_loading") is not None:
        fields["defer_loading"] = bool(body["defer_loading"])
    output_schema = body.get("output_schema", body.get("outputSchema"))
    if output_schema is not None:
        fields["output_schema"] = output_schema
    examples = body.get("input_examples", body.get("examples"))
    if examples:
        fields["input_examples"] = tuple(examples)
    if body.get("annotations"):
        fields["annotations"] = ToolAnnotations.from_mapping(body["annotations"])
    if body.get("strict") is not None:
        fields.setdefault("metadata", {})
        fields["metadata"] = {**fields["metadata"], "strict": body["strict"]}
    return Tool(**fields)


def tool_to_definition(tool: Tool) -> dict[str, Any]:
    """The complete definition dict of ``tool``: the exact inverse of :func:`tool_from_dict`.

    ``tool_from_dict(tool_to_definition(tool)) == tool`` for every tool, and the dict is plain
    JSON (what a catalog store keeps). Unlike :meth:`Tool.to_dict` (what a model is sent), it
    holds every field that describes the tool: domain, group, keywords, profiles, budgets,
    truncation, deferral and ``strict``. The handler and other metadata are not data and are
    left out; a store's reader attaches handlers again.
    """
    data: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": copy.deepcopy(dict(tool.parameters)),
        "domain": tool.domain,
        "group": tool.group,
    }
    optional: dict[str, Any] = {
        "keywords": list(tool.keywords),
        "profiles": list(tool.profiles),
        "usage_notes": tool.usage_notes,
        "input_examples": [copy.deepcopy(dict(example)) for example in tool.input_examples],
        "annotations": tool.annotations.to_mcp(),
        "timeout": tool.timeout,
        "max_result_tokens": tool.max_result_tokens,
        "truncation": tool.truncation,
        "defer_loading": tool.defer_loading,
        "strict": tool.metadata.get("strict"),
    }
    # Empty and unset fields are left out: tool_from_dict reads a missing key as the default.
    data.update({key: value for key, value in optional.items() if value not in (None, [], {})})
    if tool.output_schema is not None:  # an empty output schema is still one
        data["output_schema"] = copy.deepcopy(dict(tool.output_schema))
    return data


def resolve_pointer(root: Mapping[str, Any], ref: str) -> Any:
    """What the local reference ``ref`` (``#`` or ``#/a/b``) points to in ``root``, or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
