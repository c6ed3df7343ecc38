"""Tools as Python signatures for a program's author: ``tool_search``'s answer in code mode.

A found tool is shown as the call a program makes, with one line of documentation, generated
from its JSON schema; far fewer tokens than the JSON definition, and in the language the model
writes::

    # Search contacts by name or email
    async def crm_search(query: str, *, limit: int=10) -> {"contacts": list, "total": int}: ...

``*`` marks where the optional parameters start; an enum is a ``Literal``; a nested object is
``dict``; a local ``$ref`` (``#/$defs/Contact``, as pydantic and so most MCP servers write
nested models) is followed. What a tool returns comes from its ``outputSchema`` (an object's keys
and their types) or its Python function's return annotation, whose arguments that say nothing are
left out (``dict[str, Any]`` is shown as ``dict``: every token of a signature stays in the
conversation). A tool or parameter whose name a program cannot
write as it is shows the name a program calls it by (:mod:`~toolmgmt_core._calls.code.names`):
every signature is a line of Python.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import typing
from collections.abc import Mapping
from typing import Any

from toolmgmt_core._calls.code.names import code_parameters
from toolmgmt_core._model.schema import resolve_pointer
from toolmgmt_core._model.tool import Tool

__all__ = ["python_signature", "python_type"]

_SIMPLE = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict",
    "array": "list",
}
_MAX_ENUM = 6
_MAX_DOC = 160
_MAX_KEYS = 8
_SAYS_NOTHING = re.compile(r"\b(dict|Dict|Mapping|list|List|Sequence|set|Set)\[(?:str, )?Any\]")
"""A generic whose arguments are all ``Any`` (``dict[str, Any]``, ``list[Any]``): the bare
name says the same."""


def _followed(schema: Any, root: Any) -> Any:
    """``schema``, or what its local ``$ref`` points at in ``root`` (the tool's whole schema);
    a reference that points at nothing says nothing."""
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    if not isinstance(ref, str):
        return schema
    target = resolve_pointer(root, ref) if isinstance(root, Mapping) else None
    return target if isinstance(target, Mapping) else None


def python_type(schema: Any, depth: int = 0, root: Any = None) -> str:
    """A short Python annotation for a JSON schema (``Any`` where it says nothing; ``root``:
    the whole schema its local ``$ref`` point into)."""
    schema = _followed(schema, root)
    if not isinstance(schema, Mapping) or depth > 3:
        return "Any"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and len(enum) <= _MAX_ENUM:
        return "Literal[" + ", ".join(_literal(v) for v in enum) + "]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            names = list(dict.fromkeys(python_type(o, depth + 1, root) for o in options))
            return " | ".join(names)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = dict.fromkeys(_SIMPLE.get(k, "Any") for k in kind if isinstance(k, str))
        return " | ".join(kinds) or "Any"
    if kind == "array":
        items = python_type(schema.get("items"), depth + 1, root)
        return "list" if items == "Any" else f"list[{items}]"
    return _SIMPLE.get(kind, "Any") if isinstance(kind, str) else "Any"


def _literal(value: Any) -> str:
    """A JSON value as a short Python literal (``...`` when it is long or not JSON)."""
    if value is None or isinstance(value, bool | int | float | str | list | dict):
        text = repr(value)
        if len(text) <= 40 and "\n" not in text:
            try:
                ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return "..."
            return text
    return "..."


def _default(schema: Mapping[str, Any]) -> str:
    return _literal(schema["default"]) if "default" in schema else "None"


def python_returns(tool: Tool) -> str | None:
    """What ``tool`` returns as a Python annotation: its ``outputSchema``'s shape, else its
    function's return annotation; None when neither says."""
    if isinstance(tool.output_schema, Mapping) and tool.output_schema:
        return _shape(tool.output_schema, 0, tool.output_schema)
    handler = tool.handler
    if handler is None:
        return None
    try:
        annotation = typing.get_type_hints(handler).get("return", inspect.Signature.empty)
    except Exception:  # a hint that does not resolve: say nothing rather than guess
        return None
    if annotation is inspect.Signature.empty:
        return None
    return _annotation(annotation)


def _shape(schema: Any, depth: int, root: Any) -> str:
    """An object schema's keys and their types as a dict display (a TypedDict's shape)."""
    schema = _followed(schema, root)
    if not isinstance(schema, Mapping) or depth > 2:
        return python_type(schema, 0, root)
    properties = schema.get("properties")
    if schema.get("type") == "array":
        items = _shape(schema.get("items"), depth + 1, root)
        return "list" if items == "Any" else f"list[{items}]"
    if not isinstance(properties, Mapping) or not properties:
        return python_type(schema, 0, root)
    keys = [f"{json.dumps(str(k))}: {_shape(v, depth + 1, root)}" for k, v in properties.items()]
    if len(keys) > _MAX_KEYS:
        keys = [*keys[:_MAX_KEYS], '"...": ...']
    return "{" + ", ".join(keys) + "}"


def _annotation(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "None"
    hints = getattr(annotation, "__annotations__", None)
    if isinstance(annotation, type) and typing.is_typeddict(annotation) and hints:
        keys = [f"{json.dumps(k)}: {_annotation(v)}" for k, v in hints.items()]
        return "{" + ", ".join(keys[:_MAX_KEYS]) + "}"
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = text.replace("typing.", "").replace("collections.abc.", "")
    text = _SAYS_NOTHING.sub(r"\1", text)
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return "Any"
    return text


def python_signature(tool: Tool, name: str | None = None) -> str:
    """``tool`` as a commented ``async def`` line a program calls (by ``name``, its alias in
    programs, when given)."""
    parameters = tool.parameters if isinstance(tool.parameters, Mapping) else {}
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = parameters.get("required")
    required = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    shown = code_parameters([str(p) for p in properties])
    needed: list[str] = []
    optional: list[str] = []
    for param, schema in properties.items():
        annotation = python_type(schema, 0, parameters)
        if param in required:
            needed.append(f"{shown[str(param)]}: {annotation}")
        else:
            spec = schema if isinstance(schema, Mapping) else {}  # its own default, not a $ref's
            # ``=`` without spaces: the same Python, a token less for each default.
            optional.append(f"{shown[str(param)]}: {annotation}={_default(spec)}")
    params = ", ".join([*needed, *(["*", *optional] if optional else [])])
    doc = " ".join(tool.summary.split())
    if doc.endswith(".") and not doc.endswith(".."):
        doc = doc[:-1]  # a comment needs no full stop; it is a token on every tool shown
    if len(doc) > _MAX_DOC:
        doc = doc[: _MAX_DOC - 1] + "…"
    returned = python_returns(tool)
    returns = f" -> {returned}" if returned else ""
    return f"# {doc}\nasync def {name or tool.name}({params}){returns}: ..."
