"""JSON Schema rewriting shared by the provider formatters.

Every helper returns a new JSON-compatible value and leaves its input untouched, so a tool's
``parameters`` never change because they were formatted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from toolmgmt_core._model.errors import ProviderError
from toolmgmt_core._model.schema import resolve_pointer

__all__ = [
    "SUBSCHEMA_DICT_KEYS",
    "SUBSCHEMA_LIST_KEYS",
    "SUBSCHEMA_MAP_KEYS",
    "append_description",
    "check_refs",
    "describe_keywords",
    "inline_refs",
    "map_subschemas",
    "merge_all_of",
    "to_json",
    "to_single_object",
]

SUBSCHEMA_DICT_KEYS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
"""Keywords whose value is one schema."""
SUBSCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")
"""Keywords whose value is a list of schemas (``items`` may be one too, in old drafts)."""
SUBSCHEMA_MAP_KEYS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
"""Keywords whose value maps names to schemas."""

_MAX_REF_DEPTH = 32
_MAX_INLINED_NODES = 20_000


def to_json(value: Any) -> Any:
    """A plain JSON copy of ``value``: mappings become dicts, tuples lists."""
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def map_subschemas(
    node: Any, fn: Callable[[Any], Any], *, skip: tuple[str, ...] = ("$defs", "definitions")
) -> Any:
    """A copy of ``node`` with ``fn`` applied to each direct subschema (not recursively)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in skip:
            out[key] = value
        elif key in SUBSCHEMA_DICT_KEYS and isinstance(value, dict | bool):
            out[key] = fn(value)
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in SUBSCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in SUBSCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {k: fn(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def append_description(node: dict[str, Any], text: str) -> None:
    """Add ``text`` to ``node``'s description (in place), as a new sentence."""
    if not text:
        return
    current = str(node.get("description") or "").strip()
    if text in current:
        return
    if current and current[-1] not in ".!?)":
        current += "."
    node["description"] = f"{current} {text}".strip()


def _short_json(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_KEYWORD_PHRASES: dict[str, Callable[[Any], str]] = {
    "minLength": lambda v: f"at least {v} characters",
    "maxLength": lambda v: f"at most {v} characters",
    "pattern": lambda v: f"matches the regex {v}",
    "format": lambda v: f"format {v}",
    "minimum": lambda v: f"minimum {v}",
    "maximum": lambda v: f"maximum {v}",
    "exclusiveMinimum": lambda v: f"greater than {v}",
    "exclusiveMaximum": lambda v: f"less than {v}",
    "multipleOf": lambda v: f"a multiple of {v}",
    "minItems": lambda v: f"at least {v} items",
    "maxItems": lambda v: f"at most {v} items",
    "uniqueItems": lambda v: "items must be unique" if v else "",
    "minProperties": lambda v: f"at least {v} entries",
    "maxProperties": lambda v: f"at most {v} entries",
    "default": lambda v: f"default {_short_json(v)}",
    "examples": lambda v: "e.g. " + ", ".join(_short_json(x, 40) for x in list(v)[:3]),
    "example": lambda v: f"e.g. {_short_json(v, 40)}",
    "const": lambda v: f"always {_short_json(v)}",
    "not": lambda v: f"must not match {_short_json(v)}",
    "dependentRequired": lambda v: f"dependencies {_short_json(v)}",
    "if": lambda v: f"conditional rule {_short_json(v)}",
    "contentMediaType": lambda v: f"content type {v}",
    "contentEncoding": lambda v: f"encoding {v}",
    "deprecated": lambda v: "deprecated" if v else "",
}


def describe_keywords(node: Mapping[str, Any], keys: set[str] | frozenset[str]) -> str:
    """A short sentence carrying the meaning of the keywords ``keys`` of ``node``.

    Used when a provider rejects a keyword (``minLength``, ``format``...): the constraint moves
    into the description, where the model still reads it.
    """
    parts = []
    for key in sorted(keys):
        if key in node and key in _KEYWORD_PHRASES:
            phrase = _KEYWORD_PHRASES[key](node[key])
            if phrase:
                parts.append(phrase)
    return f"({'; '.join(parts)})" if parts else ""


def _def_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1] or "Root"


def check_refs(schema: Mapping[str, Any]) -> None:
    """Raise :class:`ProviderError` for any ``$ref`` that does not resolve inside ``schema``."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and not isinstance(
                resolve_pointer(schema, ref), Mapping | bool
            ):
                raise ProviderError(
                    f"Unresolvable $ref {ref!r}: only local references into the schema "
                    "(such as '#/$defs/Name') can be formatted."
                )
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def inline_refs(
    schema: Mapping[str, Any], *, keep_recursive: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """Replace each local ``$ref`` by a copy of what it points to.

    A reference that points back into itself (a recursive type) cannot be inlined. With
    ``keep_recursive`` it stays a ``$ref`` to ``#/$defs/<Name>`` (the definition is kept, itself
    inlined); otherwise the recursion is cut: the node becomes an object described as "nested
    <Name>, not expanded further".

    Returns:
        The new schema and notes about what was cut.

    Raises:
        ProviderError: for a reference that does not resolve (remote or missing).
    """
    root = to_json(schema)
    notes: list[str] = []
    kept: dict[str, str] = {}  # original ref -> "#/$defs/<name>"

    budget = [_MAX_INLINED_NODES]

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        budget[0] -= 1
        if budget[0] < 0:
            raise ProviderError(
                f"The schema grows past {_MAX_INLINED_NODES} nodes when its $refs are inlined; "
                "reuse fewer definitions or send it with JSON Schema references."
            )
        if "$ref" in node and isinstance(node["$ref"], str):
            ref = node["$ref"]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if ref in stack or len(stack) >= _MAX_REF_DEPTH:
                if keep_recursive:
                    new_ref = kept.setdefault(
                        ref, "#" if ref == "#" else f"#/$defs/{_def_name(ref)}"
                    )
                    return {"$ref": new_ref, **map_subschemas(siblings, lambda n: walk(n, stack))}
                note = f"nested {_def_name(ref)}, not expanded further (recursive type)"
                if note not in notes:
                    notes.append(note)
                cut: dict[str, Any] = {"type": "object"}
                append_description(cut, str(siblings.get("description", "")))
                append_description(cut, f"({note}).")
                return cut
            target = resolve_pointer(root, ref)
            if not isinstance(target, dict | bool):
                raise ProviderError(
                    f"Unresolvable $ref {ref!r}: only local references into the schema "
                    "(such as '#/$defs/Name') can be formatted."
                )
            if isinstance(target, bool):
                target = {} if target else {"not": {}}
            expanded = walk(target, (*stack, ref))
            if isinstance(expanded, dict):
                expanded = {k: v for k, v in expanded.items() if k not in ("$defs", "definitions")}
                expanded.update(map_subschemas(siblings, lambda n: walk(n, stack)))
            return expanded
        return map_subschemas(node, lambda n: walk(n, stack))

    out = walk(root, ("#",))
    if not isinstance(out, dict):
        out = {}
    out.pop("$defs", None)
    out.pop("definitions", None)
    if kept:
        defs: dict[str, Any] = {}
        done: set[str] = set()
        while len(done) < len(kept):
            for ref, new_ref in list(kept.items()):
                if ref in done or new_ref == "#":
                    done.add(ref)
                    continue
                target = resolve_pointer(root, ref)
                body = walk(target, (ref,))
                if isinstance(body, dict):
                    body = {k: v for k, v in body.items() if k not in ("$defs", "definitions")}
                defs[_def_name(ref)] = body
                done.add(ref)
        if defs:
            out["$defs"] = defs
    return out, notes


def merge_all_of(node: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``allOf`` merged into one schema.

    Properties are united (a later one wins on a clash), ``required`` lists are united, other
    keywords keep their first value and descriptions are joined.
    """
    parts = node.get("allOf")
    result = {k: v for k, v in node.items() if k != "allOf"}
    if not isinstance(parts, list):
        return dict(result)
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        if "allOf" in part:
            part = merge_all_of(part)
        for key, value in part.items():
            if key == "properties" and isinstance(value, Mapping):
                result["properties"] = {**result.get("properties", {}), **value}
            elif key == "required" and isinstance(value, list):
                merged = list(result.get("required", []))
                merged += [r for r in value if r not in merged]
                result["required"] = merged
            elif key == "description":
                append_description(result, str(value))
            else:
                result.setdefault(key, value)
    if "properties" in result and "type" not in result:
        result["type"] = "object"
    return result


def _flatten_union(schema: dict[str, Any], key: str) -> tuple[dict[str, Any], str]:
    variants = schema.pop(key)
    if not isinstance(variants, list) or not variants:
        raise ProviderError(f"Top-level {key} must be a non-empty list of object schemas.")
    properties: dict[str, Any] = dict(schema.get("properties", {}))
    required_sets: list[set[str]] = []
    shapes: list[str] = []
    for variant in variants:
        if isinstance(variant, Mapping) and "allOf" in variant:
            variant = merge_all_of(variant)
        if not isinstance(variant, Mapping) or variant.get("type", "object") != "object":
            raise ProviderError(
                f"Top-level {key} has a variant that is not an object schema; providers need "
                "the arguments to be one object. Give the tool one object schema."
            )
        for prop, sub in dict(variant.get("properties", {})).items():
            properties.setdefault(prop, sub)
        req = set(variant.get("required", []))
        required_sets.append(req)
        shapes.append("{" + ", ".join(sorted(req) or ["no required fields"]) + "}")
    common = set.intersection(*required_sets) if required_sets else set()
    required = list(dict.fromkeys([*schema.get("required", []), *sorted(common)]))
    schema["properties"] = properties
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    note = f"Give exactly one of these sets of required fields: {' or '.join(shapes)}."
    append_description(schema, note)
    return schema, f"top-level {key} merged into one object ({note})"


def to_single_object(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``parameters`` with one object schema at the top level, as Anthropic and OpenAI want.

    A top-level ``allOf`` is merged; a top-level ``anyOf``/``oneOf`` of objects becomes one object
    with every variant's properties (required: those every variant requires) and a description
    of the alternatives; a top-level ``not`` or ``enum`` is dropped; ``$schema`` is removed.

    Returns:
        The schema and notes about lossy rewrites.

    Raises:
        ProviderError: a variant that is not an object, a top level that is not an object, or a
            ``$ref`` that does not resolve.
    """
    schema = to_json(parameters)
    check_refs(schema)
    notes: list[str] = []
    schema.pop("$schema", None)
    if any(
        isinstance(v, Mapping) and "$ref" in v
        for key in ("anyOf", "oneOf", "allOf")
        for v in schema.get(key, ()) or ()
    ):
        schema, _ = inline_refs(schema, keep_recursive=True)
    if "allOf" in schema:
        schema = merge_all_of(schema)
        notes.append("top-level allOf merged into one object")
    for key in ("anyOf", "oneOf"):
        if key in schema:
            schema, note = _flatten_union(schema, key)
            notes.append(note)
    for key in ("not", "enum"):
        if key in schema:
            schema.pop(key)
            notes.append(f"top-level {key} dropped")
    kind = schema.get("type", "object")
    if kind != "object":
        if isinstance(kind, list) and "object" in kind:
            notes.append(f"top-level type {kind} narrowed to object")
        else:
            raise ProviderError(f"The arguments must be an object schema, got type {kind!r}.")
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema, notes
