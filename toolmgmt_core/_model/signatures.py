"""Tool schemas from Python functions: the parameters JSON Schema from type hints (pydantic),
descriptions from the docstring (docstring-parser)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

import docstring_parser
import pydantic

from toolmgmt_core._model.errors import InvalidToolError

__all__ = ["CONTEXT_PARAMETER", "function_schema"]

CONTEXT_PARAMETER = "toolmgmt_context"
"""The keyword a tool handler declares to be given its call's context
(:class:`~toolmgmt_core._calls.context.CallContext`): not one of the tool's parameters, so the
model never sees or sends it."""


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
    ``self``/``cls``, ``*args``, ``**kwargs`` and :data:`CONTEXT_PARAMETER` are left out.

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
        if param.name in ("self", "cls", CONTEXT_PARAMETER) or param.kind in (
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
