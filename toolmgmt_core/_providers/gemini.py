"""Tools for Google's Gemini API (``function_declarations``).

Gemini's ``parameters`` take a subset of OpenAPI 3.0 Schema: upper-case types, ``nullable``
instead of type arrays, string-only ``enum``, no ``$ref``, ``const``, ``oneOf``, ``allOf`` or
``additionalProperties``, and an ``OBJECT`` must declare properties. :func:`to_gemini_schema`
rewrites a JSON Schema into that subset: references are inlined (a recursive one is cut with a
note), ``const`` becomes a one-value enum, type arrays become ``nullable``/``anyOf``, enums on
non-string types move into the description, a free-form object is asked for as JSON text, and the
meaning of dropped keywords moves into descriptions. With ``json_schema=True`` the declaration
carries ``parametersJsonSchema`` instead, which newer Gemini models accept as plain JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolmgmt_core._model.errors import ProviderError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers.schema_utils import (
    append_description,
    describe_keywords,
    inline_refs,
    merge_all_of,
    to_json,
    to_single_object,
)

__all__ = ["allowed_functions_config", "to_gemini_declaration", "to_gemini_schema"]

_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
_FORMATS = {
    "STRING": {"enum", "date-time"},
    "INTEGER": {"int32", "int64"},
    "NUMBER": {"float", "double"},
}
_KEPT = frozenset(
    {
        "description",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
    }
)
_HANDLED = frozenset(
    {
        "type",
        "format",
        "enum",
        "const",
        "items",
        "properties",
        "required",
        "anyOf",
        "oneOf",
        "allOf",
        "nullable",
        "additionalProperties",
        "title",
        "$schema",
        "$id",
        "$comment",
    }
)
_BY_TYPE = {
    "OBJECT": {"properties", "required", "minProperties", "maxProperties", "additionalProperties"},
    "ARRAY": {"items", "minItems", "maxItems"},
    "STRING": {"minLength", "maxLength", "pattern"},
    "NUMBER": {"minimum", "maximum"},
    "INTEGER": {"minimum", "maximum"},
}
_JSON_TEXT = "Give it as JSON text."


def _infer_type(values: list[Any]) -> str:
    if values and all(isinstance(v, bool) for v in values):
        return "boolean"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return "string"


class _GeminiWriter:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, path: str, text: str) -> None:
        entry = f"{path or '(root)'}: {text}"
        if entry not in self.notes:
            self.notes.append(entry)

    def node(self, node: Any, path: str) -> dict[str, Any]:
        if node is True or not isinstance(node, dict) or not node or set(node) <= {"description"}:
            out: dict[str, Any] = {"type": "STRING"}
            if isinstance(node, dict):
                append_description(out, str(node.get("description", "")))
            append_description(out, f"Any JSON value. {_JSON_TEXT}")
            self.note(path, "value of any type asked for as JSON text")
            return out
        if "allOf" in node:
            node = merge_all_of(node)
        variants = [*node.get("anyOf", []), *node.get("oneOf", [])]
        if variants:
            return self._union(node, variants, path)
        kind = node.get("type")
        if isinstance(kind, list):
            return self._type_list(node, kind, path)
        if kind is None:
            if "properties" in node:
                kind = "object"
            elif "items" in node:
                kind = "array"
            elif "enum" in node or "const" in node:
                values = [v for v in (node.get("enum") or [node.get("const")]) if v is not None]
                kind = _infer_type(values)
            if kind is None:
                return self.node({"description": node.get("description", "")}, path)
        if kind == "null":
            self.note(path, "null-only value sent as a nullable string")
            out = {"type": "STRING", "nullable": True}
            append_description(out, str(node.get("description", "")))
            return out
        gtype = _TYPES.get(str(kind))
        if gtype is None:
            self.note(path, f"unknown type {kind!r} asked for as text")
            return self.node({"description": node.get("description", "")}, path)
        return self._typed(node, gtype, path)

    def _typed(self, node: dict[str, Any], gtype: str, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {"type": gtype}
        dropped = {k for k in node if k not in _KEPT and k not in _HANDLED}
        # The schema's own key order, not the set's: set order follows the hash seed, and the
        # payload must be byte-identical across processes (token counts, prompt caching).
        for key, value in node.items():
            if key in _KEPT and (key == "description" or key in _BY_TYPE.get(gtype, ())):
                out[key] = value
        if node.get("nullable") is True:
            out["nullable"] = True
        fmt = node.get("format")
        if fmt is not None:
            if fmt in _FORMATS.get(gtype, ()):
                out["format"] = fmt
            else:
                dropped.add("format")
        values = node.get("enum")
        if "const" in node:
            values = [node["const"]]
            self.note(path, "const sent as a one-value enum")
        if values is not None:
            if None in values:
                out["nullable"] = True
                values = [v for v in values if v is not None]
            if gtype == "STRING":
                out["enum"] = [str(v) for v in values]
                out["format"] = "enum"
            else:
                shown = ", ".join(str(v) for v in values[:20])
                append_description(out, f"One of: {shown}.")
                self.note(path, f"enum on a {gtype.lower()} moved to the description")
        described = describe_keywords(node, dropped)
        if described:
            append_description(out, described)
            self.note(path, f"{', '.join(sorted(dropped))} moved to the description")
        if gtype == "ARRAY":
            out["items"] = self._items(node.get("items"), node.get("prefixItems"), path)
        if gtype == "OBJECT":
            return self._object(node, out, path)
        return out

    def _items(self, items: Any, prefix: Any, path: str) -> dict[str, Any]:
        if isinstance(prefix, list) and prefix:
            items = prefix
        if isinstance(items, list):
            self.note(path, "tuple items sent as one item schema")
            if len(items) == 1:
                return self.node(items[0], f"{path}/items")
            return self.node({"anyOf": items}, f"{path}/items")
        if isinstance(items, dict) and items:
            return self.node(items, f"{path}/items")
        return self.node({}, f"{path}/items")

    def _object(self, node: dict[str, Any], out: dict[str, Any], path: str) -> dict[str, Any]:
        properties = node.get("properties") or {}
        if not properties:
            # Gemini refuses an OBJECT without properties: ask for the object as JSON text.
            text: dict[str, Any] = {"type": "STRING"}
            append_description(text, str(node.get("description", "")))
            append_description(text, f"A JSON object. {_JSON_TEXT}")
            if out.get("nullable"):
                text["nullable"] = True
            self.note(path, "free-form object asked for as JSON text")
            return text
        out["properties"] = {k: self.node(v, f"{path}/{k}") for k, v in properties.items()}
        required = [r for r in node.get("required", []) if r in properties]
        if required:
            out["required"] = required
        if isinstance(node.get("additionalProperties"), dict):
            self.note(path, "additionalProperties dropped")
        return out

    def _union(self, node: dict[str, Any], variants: list[Any], path: str) -> dict[str, Any]:
        rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        nullable = False
        kept = []
        for variant in variants:
            if isinstance(variant, dict) and variant.get("type") == "null" and len(variant) == 1:
                nullable = True
            else:
                kept.append(variant)
        if len(kept) == 1:
            merged = {**kept[0], **{k: v for k, v in rest.items() if k != "type"}}
            out = self.node(merged, path)
        elif not kept:
            out = self.node({"type": "null", **rest}, path)
        else:
            converted = [self.node(v, f"{path}/anyOf/{i}") for i, v in enumerate(kept)]
            out = {"anyOf": converted}
            if "description" in rest:
                out["description"] = rest["description"]
        if nullable:
            out["nullable"] = True
        return out

    def _type_list(self, node: dict[str, Any], kinds: list[Any], path: str) -> dict[str, Any]:
        nullable = "null" in kinds
        real = [k for k in kinds if k != "null"]
        if len(real) <= 1:
            out = self.node({**node, "type": real[0] if real else "null"}, path)
        else:
            variants = []
            for kind in real:
                gtype = _TYPES.get(str(kind), "")
                own = {
                    k: v
                    for k, v in node.items()
                    if k in _BY_TYPE.get(gtype, ()) or k in ("enum", "format")
                }
                variants.append({**own, "type": kind})
            shared = {k: v for k, v in node.items() if k == "description"}
            out = self._union({**shared, "anyOf": variants}, variants, path)
        if nullable:
            out["nullable"] = True
        return out


def to_gemini_schema(parameters: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """``parameters`` in the OpenAPI subset Gemini accepts.

    Returns:
        The schema (None for a tool without arguments: Gemini wants ``parameters`` left out then)
        and notes on lossy rewrites.

    Raises:
        ProviderError: for a reference that does not resolve.
    """
    schema, cut = inline_refs(parameters)
    # The top level must be one object: merge allOf and unions.
    schema, merged = to_single_object(schema)
    if not schema.get("properties"):
        return None, [*cut, *merged]
    writer = _GeminiWriter()
    out = writer.node(schema, "")
    return out, [*cut, *merged, *writer.notes]


def to_gemini_declaration(
    tool: Tool, name: str, *, json_schema: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """One tool as a Gemini ``FunctionDeclaration`` dict, sent as ``name``."""
    data: dict[str, Any] = {"name": name}
    if tool.description:
        data["description"] = tool.description
    if json_schema:
        schema = to_json(tool.parameters)
        schema.pop("$schema", None)
        data["parametersJsonSchema"] = schema
        return data, []
    parameters, notes = to_gemini_schema(tool.parameters)
    if parameters is not None:
        data["parameters"] = parameters
    return data, notes


def allowed_functions_config(names: Sequence[str], *, mode: str = "auto") -> dict[str, Any]:
    """A Gemini ``tool_config`` restricting a step to ``names`` (provider names).

    ``auto`` lets the model answer in text or call one of them (Gemini's ``VALIDATED`` mode);
    ``required`` makes it call one (``ANY``).
    """
    if mode not in ("auto", "required"):
        raise ProviderError(f"allowed_mode must be 'auto' or 'required', got {mode!r}.")
    return {
        "function_calling_config": {
            "mode": "VALIDATED" if mode == "auto" else "ANY",
            "allowed_function_names": list(names),
        }
    }
