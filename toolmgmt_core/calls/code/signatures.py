"""Tools as Python signatures for a program's author: ``tool_search``'s answer in code mode.

A found tool is shown as the call a program makes, with one line of documentation, generated
from its JSON schema; far fewer tokens than the JSON definition, and in the language the model
writes::

    # Search contacts by name or email. -> call_tool("crm_search", {...})
    async def crm_search(query: str, limit: int = 10, *, owner: str | None = None) -> dict

Parameters keep the schema's names; ``*`` marks where the optional ones start; an enum is a
``Literal``; a nested object is ``dict``. Names that are not Python identifiers are quoted.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Mapping
from typing import Any

from toolmgmt_core.model.tool import Tool

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


def python_type(schema: Any, depth: int = 0) -> str:
    """A short Python annotation for a JSON schema (``Any`` where it says nothing)."""
    if not isinstance(schema, Mapping) or depth > 3:
        return "Any"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and len(enum) <= _MAX_ENUM:
        return "Literal[" + ", ".join(json.dumps(v) for v in enum) + "]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            names = list(dict.fromkeys(python_type(o, depth + 1) for o in options))
            return " | ".join(names)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(_SIMPLE.get(k, "Any") for k in kind if isinstance(k, str)))
    if kind == "array":
        items = python_type(schema.get("items"), depth + 1)
        return "list" if items == "Any" else f"list[{items}]"
    return _SIMPLE.get(kind, "Any") if isinstance(kind, str) else "Any"


def _default(schema: Mapping[str, Any]) -> str:
    if "default" in schema:
        try:
            return (
                json.dumps(schema["default"])[:40]
                .replace("true", "True")
                .replace("false", "False")
                .replace("null", "None")
            )
        except (TypeError, ValueError):
            return "..."
    return "None"


def python_signature(tool: Tool) -> str:
    """``tool`` as a commented ``async def`` line a program calls through ``call_tool``."""
    parameters = tool.parameters if isinstance(tool.parameters, Mapping) else {}
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = parameters.get("required")
    required = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    needed: list[str] = []
    optional: list[str] = []
    for name, schema in properties.items():
        shown = name if name.isidentifier() and not keyword.iskeyword(name) else repr(name)
        annotation = python_type(schema)
        if name in required:
            needed.append(f"{shown}: {annotation}")
        else:
            spec = schema if isinstance(schema, Mapping) else {}
            optional.append(f"{shown}: {annotation} = {_default(spec)}")
    params = ", ".join([*needed, *(["*", *optional] if optional else [])])
    doc = " ".join(tool.summary.split())
    if len(doc) > _MAX_DOC:
        doc = doc[: _MAX_DOC - 1] + "…"
    returns = f" -> {python_type(tool.output_schema)}" if tool.output_schema else ""
    return f"# {doc}\nasync def {tool.name}({params}){returns}"
