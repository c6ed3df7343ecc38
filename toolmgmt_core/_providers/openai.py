"""Tools for OpenAI's Chat Completions and Responses APIs.

Strict mode (structured outputs for function calls) accepts a subset of JSON Schema: every object
closed with ``additionalProperties: false``, every property listed in ``required`` (an optional one
becomes nullable), ``anyOf`` but not ``oneOf``/``allOf``/``not``/``if``, ``$ref`` only without
sibling keywords, ``pattern`` and a few ``format`` values on strings, numeric bounds and
``multipleOf``, ``minItems``/``maxItems``. :func:`to_strict_schema` rewrites a schema into that
subset, moving the meaning of dropped keywords into descriptions, or raises
:class:`StrictModeUnsupported` naming why it cannot (a free-form object, an array without items,
a value of any type...), and the tool is then sent non-strict.

A model in strict mode sends ``null`` for an optional argument it leaves out;
:func:`~toolmgmt_core._calls.validation.validate_arguments` drops those (for any tool call) before
the
arguments are checked against the tool's own schema; :func:`strip_strict_nulls` does the same on
its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolmgmt_core._calls.validation import drop_refused_nulls
from toolmgmt_core._model.errors import ProviderError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers.schema_utils import (
    append_description,
    describe_keywords,
    inline_refs,
    merge_all_of,
    to_single_object,
)

__all__ = [
    "MAX_TOOLS",
    "STRICT_FORMATS",
    "StrictModeUnsupported",
    "allowed_tools_choice",
    "strip_strict_nulls",
    "to_openai_tool",
    "to_strict_schema",
]

MAX_TOOLS = 128
"""Most tools OpenAI accepts in one request."""

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats strict mode supports."""

_MAX_DEPTH = 10
_MAX_PROPERTIES = 5000
_MAX_ENUM_VALUES = 1000

_STRICT_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)


_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})


class StrictModeUnsupported(ProviderError):
    """A schema that cannot be rewritten for OpenAI strict mode; the message says why."""


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` also accepting ``null``."""
    kind = node.get("type")
    if "$ref" in node or "anyOf" in node or ("enum" in node and kind is None):
        if "anyOf" in node:
            variants = list(node["anyOf"])
            if not any(v.get("type") == "null" for v in variants if isinstance(v, dict)):
                variants.append({"type": "null"})
            return {**node, "anyOf": variants}
        description = node.get("description")
        inner = {k: v for k, v in node.items() if k != "description"}
        out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
        if description:
            out["description"] = description
        return out
    if isinstance(kind, str):
        node = {**node, "type": [kind, "null"]} if kind != "null" else node
    elif isinstance(kind, list) and "null" not in kind:
        node = {**node, "type": [*kind, "null"]}
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    if "const" in node:
        const = node.pop("const")
        node["enum"] = [const, None]
    return node


class _StrictWriter:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.properties = 0
        self.enum_values = 0

    def fail(self, path: str, why: str) -> StrictModeUnsupported:
        return StrictModeUnsupported(f"{path or '(root)'}: {why}")

    def node(self, node: Any, path: str, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise self.fail(path, f"nested deeper than {_MAX_DEPTH} levels")
        if node is True or (isinstance(node, dict) and not set(node) - _ANNOTATIONS):
            raise self.fail(path, "a value of any type (strict mode needs a type)")
        if not isinstance(node, dict):
            raise self.fail(path, "a schema that is not an object")
        node = dict(node)
        if "allOf" in node:
            node = merge_all_of(node)
            self.notes.append(f"{path or '(root)'}: allOf merged")
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
            self.notes.append(f"{path or '(root)'}: oneOf sent as anyOf")
        for key in ("prefixItems", "patternProperties", "unevaluatedProperties"):
            if key in node:
                raise self.fail(path, f"{key} has no strict-mode equivalent")
        if "$ref" in node:
            siblings = {k for k in node if k != "$ref"}
            if siblings - {"description"}:
                self.notes.append(f"{path}: keywords beside $ref dropped")
            description = node.get("description")
            out: dict[str, Any] = {"$ref": node["$ref"]}
            if description and depth > 0:
                # $ref takes no siblings: wrap it so the description survives.
                return {"anyOf": [out], "description": description}
            return out
        dropped = {k for k in node if k not in _STRICT_KEYS}
        if node.get("format") not in (None, *STRICT_FORMATS):
            dropped.add("format")
        described = describe_keywords(node, dropped)
        out = {k: v for k, v in node.items() if k not in dropped}
        if described:
            append_description(out, described)
            self.notes.append(f"{path or '(root)'}: {', '.join(sorted(dropped))} moved to text")
        if "enum" in out:
            self.enum_values += len(out["enum"])
            if self.enum_values > _MAX_ENUM_VALUES:
                raise self.fail(path, f"more than {_MAX_ENUM_VALUES} enum values in all")
        if "anyOf" in out:
            if depth == 0:
                raise self.fail(path, "the top level is an anyOf; it must be one object")
            out["anyOf"] = [
                self.node(v, f"{path}/anyOf/{i}", depth + 1) for i, v in enumerate(out["anyOf"])
            ]
            return out
        kind = out.get("type")
        kinds = set(kind) if isinstance(kind, list) else {kind}
        if kind is None and "enum" not in out and "const" not in out:
            if "properties" in out:
                out["type"] = "object"
                kinds = {"object"}
            else:
                raise self.fail(path, "a value without a type")
        if "object" in kinds:
            out = self._object(out, path, depth)
        if "array" in kinds:
            items = out.get("items")
            if not isinstance(items, dict) or not items:
                raise self.fail(path, "an array without an items schema")
            out["items"] = self.node(items, f"{path}/items", depth + 1)
        return out

    def _object(self, out: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        properties = out.get("properties") or {}
        extra = out.get("additionalProperties")
        if extra not in (None, False):
            raise self.fail(path, "an object with free-form additional properties (a map)")
        if not properties and depth > 0:
            raise self.fail(path, "an object with no declared properties")
        self.properties += len(properties)
        if self.properties > _MAX_PROPERTIES:
            raise self.fail(path, f"more than {_MAX_PROPERTIES} properties in all")
        required = set(out.get("required", []))
        new_props: dict[str, Any] = {}
        for prop, sub in properties.items():
            converted = self.node(sub, f"{path}/{prop}", depth + 1)
            if prop not in required:
                converted = _nullable(converted)
            new_props[prop] = converted
        out["properties"] = new_props
        out["required"] = list(new_props)
        out["additionalProperties"] = False
        return out


def to_strict_schema(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``parameters`` rewritten for OpenAI strict mode.

    Returns:
        The strict schema and notes on what was rewritten.

    Raises:
        StrictModeUnsupported: naming the place and the reason it cannot be strict.
        ProviderError: for a schema whose references do not resolve.
    """
    top, merged = to_single_object(parameters)
    schema, cut = inline_refs(top, keep_recursive=True)
    cut = [*merged, *cut]
    writer = _StrictWriter()
    defs = schema.pop("$defs", None)
    out = writer.node(schema, "", 0)
    if out.get("type") != "object":
        raise writer.fail("", f"the top level must be an object, got {out.get('type')!r}")
    if defs:
        out["$defs"] = {name: writer.node(body, f"$defs/{name}", 1) for name, body in defs.items()}
    return out, [*cut, *writer.notes]


def to_openai_tool(
    tool: Tool,
    name: str,
    *,
    api: Literal["chat", "responses"] = "chat",
    strict: bool = False,
) -> tuple[dict[str, Any], list[str], str | None]:
    """One tool for OpenAI, sent as ``name``.

    Returns:
        The tool dict (``ChatCompletionFunctionToolParam`` or Responses ``FunctionToolParam``),
        notes on lossy rewrites, and the reason strict mode fell back to non-strict (or None).
    """
    notes: list[str] = []
    fallback: str | None = None
    parameters: dict[str, Any]
    is_strict = False
    if strict:
        try:
            parameters, notes = to_strict_schema(tool.parameters)
            is_strict = True
        except ProviderError as exc:  # not strict-able; a truly broken schema fails below
            fallback = str(exc)
    if not is_strict:
        # OpenAI refuses anyOf/oneOf/allOf/enum/not at the top level even when not strict
        parameters, loose_notes = to_single_object(tool.parameters)
        notes = [*notes, *loose_notes]
    if api == "responses":
        data: dict[str, Any] = {
            "type": "function",
            "name": name,
            "parameters": parameters,
            "strict": is_strict,
        }
        if tool.description:
            data["description"] = tool.description
        return data, notes, fallback
    function: dict[str, Any] = {"name": name, "parameters": parameters}
    if tool.description:
        function["description"] = tool.description
    if strict:
        function["strict"] = is_strict
    return {"type": "function", "function": function}, notes, fallback


def allowed_tools_choice(
    names: Sequence[str], *, api: Literal["chat", "responses"], mode: str = "auto"
) -> dict[str, Any]:
    """An ``allowed_tools`` tool choice restricting a step to ``names`` (provider names).

    The tool list stays the same, so the prompt cache still hits.
    """
    if mode not in ("auto", "required"):
        raise ProviderError(f"allowed_mode must be 'auto' or 'required', got {mode!r}.")
    if api == "responses":
        return {
            "type": "allowed_tools",
            "mode": mode,
            "tools": [{"type": "function", "name": n} for n in names],
        }
    return {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": mode,
            "tools": [{"type": "function", "function": {"name": n}} for n in names],
        },
    }


def strip_strict_nulls(arguments: Any, parameters: Mapping[str, Any]) -> Any:
    """``arguments`` without the ``null`` values strict mode added for left-out optional fields.

    A field's ``null`` is dropped when the original schema does not require the field and does
    not accept ``null`` for it, at any depth (``$ref``, ``anyOf`` and arrays of objects
    included); the schema's own validator decides. Tool calls get this already
    (:func:`~toolmgmt_core._calls.validation.validate_arguments`); this is for arguments checked
    elsewhere.
    """
    return drop_refused_nulls(arguments, parameters)
