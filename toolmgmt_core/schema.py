"""Turning foreign tool definitions into :class:`~toolmgmt_core.tool.Tool` objects.

Two sources live here: Python functions (schema from type hints, descriptions from the
docstring, with pydantic and docstring-parser) and dicts in the shapes the ecosystem uses:

- plain ``{"name", "description", "parameters"}``;
- OpenAI Chat Completions ``{"type": "function", "function": {...}}``;
- OpenAI Responses ``{"type": "function", "name", "description", "parameters"}``;
- Anthropic ``{"name", "description", "input_schema"}``;
- MCP ``{"name", "description", "inputSchema", "outputSchema", "annotations"}``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

import docstring_parser
import pydantic

from toolmgmt_core.errors import InvalidToolError
from toolmgmt_core.tool import Tool, ToolAnnotations

__all__ = ["function_schema", "tool_from_dict"]

_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords (noise for a model), keeping properties."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def function_schema(fn: Callable[..., Any]) -> tuple[str, str, dict[str, Any]]:
    """The name, description and parameters JSON Schema of a Python function.

    Parameter descriptions come from a Google, NumPy or reST docstring; types from hints
    (anything pydantic understands: enums, ``Literal``, dataclasses, models, ``Optional``).
    ``self``/``cls``, ``*args`` and ``**kwargs`` are left out.

    Raises:
        InvalidToolError: when a hint cannot be turned into a JSON Schema.
    """
    name = getattr(fn, "__name__", None) or type(fn).__name__
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
    description = "\n\n".join(
        part.strip() for part in (doc.short_description, doc.long_description) if part
    )
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        hints = {}
    signature = inspect.signature(fn)
    model_fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.name in ("self", "cls") or param.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        model_fields[param.name] = (
            annotation,
            pydantic.Field(default, description=param_docs.get(param.name) or None),
        )
    try:
        model = pydantic.create_model(f"{name}_arguments", **model_fields)
        schema = model.model_json_schema()
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, TypeError) as exc:
        raise InvalidToolError(
            f"Tool {name!r}: cannot build a JSON Schema from its type hints: {exc}"
        ) from exc
    schema = _strip_titles(schema)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return name, description, schema


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
