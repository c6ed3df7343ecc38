"""Older JSON Schema drafts' forms, rewritten to the 2020-12 form a tool's schema is checked as.

Real MCP servers publish what their schema library writes, and some write draft 4 (zod's JSON
Schema output for ``.positive()``: ``{"minimum": 0, "exclusiveMinimum": true}``), which the 2020-12
meta-schema refuses, so the tool would be dropped. :func:`normalize_schema` rewrites the forms
whose meaning is unambiguous, on a copy, and says what it did (the tool keeps the notes in its
``metadata[NORMALIZED_KEY]``, and ``toolmgmt lint`` reports them as ``schema-normalized``):

- ``exclusiveMinimum`` / ``exclusiveMaximum`` as booleans (draft 4) beside ``minimum`` /
  ``maximum``: the bound itself becomes the exclusive one (``{"exclusiveMinimum": 0}``); a false
  one, or a true one without its bound, is dropped (it said nothing);
- ``items`` as a list (a tuple, draft 4 to 2019-09): ``prefixItems``, and ``additionalItems``
  becomes ``items``;
- a draft 3, 4, 6 or 7 ``$schema`` at the root, once nothing of that draft is left that 2020-12
  reads otherwise (an ``id`` that would move a reference is left to the schema guard to refuse):
  removed, so that the schema says the dialect it is checked as.

``definitions`` and ``#/definitions/...`` references need no rewrite: a reference is a JSON
pointer into the schema, which 2020-12 resolves the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["NORMALIZED_KEY", "normalize_schema"]

NORMALIZED_KEY = "schema_normalized"
"""The key of a tool's ``metadata`` listing what :func:`normalize_schema` rewrote."""

_OLD_DIALECT = re.compile(r"^https?://json-schema\.org/(draft-0[3467]/)?schema#?$")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
)
_DATA = ("enum", "const", "default", "examples", "id", "$schema")
"""Keywords whose values are data, not subschemas."""
_BOUNDS = (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum"))


def normalize_schema(schema: dict[str, Any]) -> list[str]:
    """Rewrite ``schema`` (a copy the caller owns) in place to 2020-12 forms; what was rewritten,
    one note each (``at properties/pages: exclusiveMinimum true -> exclusiveMinimum 0``)."""
    notes: list[str] = []
    _visit(schema, [], notes, 0)
    dialect = schema.get("$schema")
    if notes and isinstance(dialect, str) and _OLD_DIALECT.match(dialect) and not _has_id(schema):
        del schema["$schema"]
        notes.append(f"at (root): $schema {dialect!r} removed (the schema is 2020-12 now)")
    return notes


def _visit(node: Any, where: list[str], notes: list[str], depth: int) -> None:
    if not isinstance(node, dict) or depth > 200:  # the shape check bounds depth before this
        return
    at = "/".join(where) or "(root)"
    for exclusive, bound in _BOUNDS:
        flag = node.get(exclusive)
        if not isinstance(flag, bool):
            continue
        limit = node.get(bound)
        if flag and isinstance(limit, int | float) and not isinstance(limit, bool):
            node[exclusive] = limit
            del node[bound]
            notes.append(f"at {at}: {exclusive} true with {bound} {limit} -> {exclusive} {limit}")
        else:
            del node[exclusive]
            notes.append(f"at {at}: {exclusive} {str(flag).lower()} (draft 4) removed")
    items = node.get("items")
    if isinstance(items, list) and "prefixItems" not in node:
        node["prefixItems"] = items
        extra = node.pop("additionalItems", None)
        if extra is None:
            del node["items"]
        else:
            node["items"] = extra
        notes.append(f"at {at}: items as a list (draft 4) -> prefixItems")
    for key in _SCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            for name, child in value.items():
                _visit(child, [*where, key, str(name)], notes, depth + 1)
    for key in _SCHEMA_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for index, child in enumerate(value):
                _visit(child, [*where, key, str(index)], notes, depth + 1)
    for key in _SCHEMA_ONE:
        _visit(node.get(key), [*where, key], notes, depth + 1)


def _has_id(node: Any, depth: int = 0) -> bool:
    """Whether a subschema holds a draft-4 ``id`` (a string), which the declared dialect reads
    as an identifier that may move references: then the ``$schema`` stays, for the guard."""
    if depth > 200:
        return True
    if isinstance(node, list):
        return any(_has_id(item, depth + 1) for item in node)
    if not isinstance(node, Mapping):
        return False
    if depth > 0 and isinstance(node.get("id"), str):
        return True
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            if any(_has_id(child, depth + 1) for child in value.values()):
                return True
        elif key not in _DATA and _has_id(value, depth + 1):
            return True
    return False
