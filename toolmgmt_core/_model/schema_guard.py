"""What a tool's JSON Schema may hold, checked once, when the tool is made.

Tool schemas come from third parties (MCP upstreams, OpenAPI exports, other people's code), so
they are untrusted input. :func:`check_tool_schema` refuses, when a tool is made (so the tool is
skipped and reported, never half-added):

- a ``$ref`` / ``$dynamicRef`` / ``$recursiveRef`` that is not a local fragment (``#/...`` or an
  ``#anchor``) resolving inside the schema itself: a remote or file reference would make
  validation fetch it at call time (SSRF, local file read) and echo what it fetched;
- a ``$ref`` cycle that never goes into a property or an item (validation would never end);
- a reference that points at something that is not a schema (a string, a number, a list):
  every call would then fail to validate, as ``tool_unavailable``;
- a ``$schema`` that is not a known JSON Schema dialect, or one below the root naming another
  dialect than the root's: every tool schema is checked as JSON Schema 2020-12 (the validator
  is pinned, see :mod:`toolmgmt_core._model.schema_validator`), so a subschema cannot switch
  dialect;
- a reference that resolves differently under the root's declared dialect than under 2020-12
  (draft 4's ``id`` moving a ``$ref``'s base URI): what the author meant is not what is checked;
- a ``pattern`` / ``patternProperties`` regex the bounded engine cannot compile, and
  ``unevaluatedProperties`` beside ``patternProperties`` (jsonschema matches those regexes with
  the unbounded ``re`` engine there);
- a schema nested deeper than :data:`MAX_SCHEMA_DEPTH` or longer than :data:`MAX_SCHEMA_CHARS`
  (:func:`check_schema_shape`, which runs first, before anything recursive touches it).

Arguments are then checked by the bounded validator of :mod:`toolmgmt_core._model.schema_validator`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
import regex

from toolmgmt_core._model.schema_validator import NO_RETRIEVAL, compiled_pattern

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_SCHEMA_CHARS",
    "MAX_SCHEMA_DEPTH",
    "check_schema_shape",
    "check_tool_schema",
    "json_depth",
]

MAX_SCHEMA_DEPTH = 100
"""Deepest nesting of JSON containers a tool schema may have."""

MAX_SCHEMA_CHARS = 1_000_000
"""Longest a tool schema may be, as compact JSON."""

MAX_ARGUMENT_DEPTH = 100
"""Deepest nesting of JSON containers a call's arguments may have."""

_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose value is a schema applied to the same instance (a cycle through only these,
# and references, never ends), and those applied to a part of it (bounded by its depth).
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")
_IN_PLACE_MAP = ("dependentSchemas",)
_INNER_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
_INNER_MAP = ("properties", "patternProperties")
_DEFINITIONS = ("$defs", "definitions")


def json_depth(value: Any, limit: int) -> int:
    """How deeply ``value``'s lists and dicts nest (0 for a scalar), counting no further than
    ``limit + 1``: an iterative walk, so a value too deep for recursion is measured too."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


_SPEC = referencing.jsonschema.DRAFT202012


def check_schema_shape(schema: Any) -> str | None:
    """Why ``schema`` is too deep or too large to take in, or None. Cheap and iterative: safe
    on any value, so it runs before anything recursive touches the schema."""
    depth = json_depth(schema, MAX_SCHEMA_DEPTH)
    if depth > MAX_SCHEMA_DEPTH:
        return f"nest deeper than {MAX_SCHEMA_DEPTH} levels; flatten the schema"
    size = len(json.dumps(schema, separators=(",", ":"), default=repr))
    if size > MAX_SCHEMA_CHARS:
        return (
            f"are {size:,} characters of JSON, over the limit of {MAX_SCHEMA_CHARS:,} (a model "
            "cannot use a schema that large anyway)"
        )
    return None


_Bases = dict[tuple[int, str], tuple[list[str], int]]
"""Each reference (its node and keyword): where it sits and the document its base URI names
(the id of its contents; -1 for none inside the schema)."""


def check_tool_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` could make validation do I/O, loop or hang, or None when it cannot.

    The answer reads after "parameters ": "at properties/a/$ref: only local references ...".
    """
    problem = check_schema_shape(schema)
    if problem is not None:
        return problem
    try:
        bases = _Walk(schema, _SPEC).run()
        declared = _declared_spec(schema.get("$schema"))
        if declared is not _SPEC:
            _same_bases(bases, _Walk(schema, declared, quiet=True).run(), declared)
    except _Refused as refused:
        return str(refused)
    return None


def _declared_spec(dialect: Any) -> Any:
    """The referencing specification ``dialect`` (a ``$schema`` value) names; 2020-12 when it
    names none (``_Walk`` refuses an unknown one before this is asked)."""
    if dialect is None:
        return _SPEC
    try:
        return referencing.jsonschema.specification_with(dialect)
    except (referencing.jsonschema.UnknownDialect, TypeError):
        return _SPEC


def _same_bases(checked: _Bases, declared: _Bases, spec: Any) -> None:
    """Refuse a reference whose base URI an identifier moves to another document under the
    declared dialect only (draft 4's ``id``): what it means there is not what is checked."""
    for site, (where, base) in checked.items():
        if declared.get(site, (where, base))[1] != base:
            raise _Refused(
                f'at {"/".join(where)}: under its $schema ({spec.name}) an "id" above this '
                "reference moves it to another document; tool schemas are checked as JSON Schema "
                "2020-12, where it does not move: remove that id, or the $schema."
            )


class _Refused(Exception):
    """A schema :class:`_Walk` refuses; the message says where and why."""


class _Walk:
    """One schema-aware walk over a schema: references, dialects, regexes and cycles."""

    def __init__(self, schema: Mapping[str, Any], spec: Any, *, quiet: bool = False) -> None:
        self.schema = schema
        self.spec = spec
        """How identifiers and references are read (2020-12, or the declared dialect)."""
        self.quiet = quiet
        """Pass over a reference that resolves to nothing (only its base URI is wanted)."""
        self.root = NO_RETRIEVAL.resolver_with_root(spec.create_resource(schema))
        self.done: set[int] = set()
        self.in_place: dict[int, list[int]] = {}
        self.bases: _Bases = {}
        """Where each reference sits and the document it resolves in."""
        self.has_pattern_properties = False
        self.has_unevaluated = False

    def fail(self, where: list[str], problem: str) -> _Refused:
        return _Refused(f"at {'/'.join(where) or '(root)'}: {problem}")

    def run(self) -> _Bases:
        self.visit(self.schema, self.root, [])
        if self.has_pattern_properties and self.has_unevaluated:
            raise self.fail(
                [],
                "unevaluatedProperties beside patternProperties is not supported (those "
                "regexes could not be time-limited); use additionalProperties instead.",
            )
        self._refuse_cycles()
        return self.bases

    def visit(self, node: Any, resolver: Any, where: list[str]) -> None:
        if not isinstance(node, Mapping) or id(node) in self.done:
            return
        self.done.add(id(node))
        edges = self.in_place.setdefault(id(node), [])
        if "$schema" in node:
            self._check_dialect(node, where)
        try:
            resolver = resolver.in_subresource(self.spec.create_resource(node))
        except Exception as exc:  # a malformed $id
            raise self.fail(where + ["$id"], f"unusable $id: {exc}") from exc
        for key in _REF_KEYS:
            if key in node:
                ref = node[key]
                self.bases[(id(node), key)] = (where + [key], self._document(resolver))
                try:
                    target = self._resolve(ref, resolver, where + [key])
                except _Refused:
                    if self.quiet:
                        continue
                    raise
                edges.append(id(target.contents))
                # Where the target sits, for messages: its pointer ("#/$defs/x" -> $defs/x).
                at = ref[2:].split("/") if ref.startswith("#/") else where + [key]
                self.visit(target.contents, target.resolver, at)
        self._check_regexes(node, where)
        for key in _IN_PLACE_ONE:
            self._child(node, key, resolver, where, edges)
        for key in _IN_PLACE_MANY:
            for index, item in enumerate(_items(node.get(key))):
                edges.append(id(item))
                self.visit(item, resolver, where + [key, str(index)])
        for key in _IN_PLACE_MAP:
            for name, item in _entries(node.get(key)):
                edges.append(id(item))
                self.visit(item, resolver, where + [key, name])
        for key in _INNER_ONE:
            self._child(node, key, resolver, where, None)
        items = node.get("items")
        for index, item in enumerate(_items(items) if isinstance(items, list) else [items]):
            self.visit(item, resolver, where + ["items", str(index)])
        for index, item in enumerate(_items(node.get("prefixItems"))):
            self.visit(item, resolver, where + ["prefixItems", str(index)])
        for key in (*_INNER_MAP, *_DEFINITIONS):
            for name, item in _entries(node.get(key)):
                self.visit(item, resolver, where + [key, name])
        for name, item in _entries(node.get("dependencies")):  # draft 7: schemas or name lists
            self.visit(item, resolver, where + ["dependencies", name])

    def _document(self, resolver: Any) -> int:
        """The document a resolver's base URI names (``#`` alone: that whole document)."""
        try:
            return id(resolver.lookup("#").contents)
        except referencing.exceptions.Unresolvable:
            return -1

    def _check_dialect(self, node: Mapping[str, Any], where: list[str]) -> None:
        dialect = node["$schema"]
        try:
            spec = referencing.jsonschema.specification_with(dialect)
        except (referencing.jsonschema.UnknownDialect, TypeError) as exc:
            raise self.fail(
                where + ["$schema"],
                f"unknown $schema {str(dialect)[:80]!r}; use a JSON Schema dialect URI such "
                'as "https://json-schema.org/draft/2020-12/schema", or leave it out.',
            ) from exc
        if node is not self.schema and spec is not _declared_spec(self.schema.get("$schema")):
            raise self.fail(
                where + ["$schema"],
                f"a subschema may not switch dialect (to {str(dialect)[:80]!r}): the whole "
                "schema is checked as JSON Schema 2020-12; remove this $schema.",
            )

    def _child(
        self, node: Mapping[str, Any], key: str, resolver: Any, where: list[str], edges: Any
    ) -> None:
        child = node.get(key)
        if isinstance(child, Mapping):
            if edges is not None:
                edges.append(id(child))
            self.visit(child, resolver, where + [key])

    def _resolve(self, ref: Any, resolver: Any, where: list[str]) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise self.fail(
                where,
                f'only local references ("#/$defs/...") are allowed, got {str(ref)[:80]!r}: '
                "a tool's schema must be self-contained, it is never fetched.",
            )
        try:
            target = resolver.lookup(ref)
        except referencing.exceptions.Unresolvable as exc:
            raise self.fail(
                where, f"reference {ref[:80]!r} points at nothing inside the schema."
            ) from exc
        if not isinstance(target.contents, Mapping | bool):  # a schema is an object or a bool
            raise self.fail(
                where,
                f"reference {ref[:80]!r} points at {_kind(target.contents)}, not a schema (an "
                "object, or true/false); point it at a subschema such as #/$defs/Name.",
            )
        return target

    def _check_regexes(self, node: Mapping[str, Any], where: list[str]) -> None:
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            self._compile(pattern, where + ["pattern"])
        properties = node.get("patternProperties")
        if isinstance(properties, Mapping):
            self.has_pattern_properties = self.has_pattern_properties or bool(properties)
            for key in properties:
                self._compile(str(key), where + ["patternProperties"])
        if "unevaluatedProperties" in node:
            self.has_unevaluated = True

    def _compile(self, pattern: str, where: list[str]) -> None:
        try:
            compiled_pattern(pattern)
        except (regex.error, ValueError, OverflowError) as exc:
            raise self.fail(where, f"regex {pattern[:80]!r} does not compile: {exc}.") from exc

    def _refuse_cycles(self) -> None:
        """A reference cycle through in-place keywords only would recurse forever."""
        state: dict[int, int] = {}  # 1: on the path, 2: finished
        for start in self.in_place:
            if state.get(start):
                continue
            stack = [(start, iter(self.in_place.get(start, ())))]
            state[start] = 1
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(child) == 1:
                    raise self.fail(
                        [],
                        "a $ref cycle that never goes into a property or an item (validation "
                        "would never end); make the recursion go through properties or items.",
                    )
                elif not state.get(child):
                    state[child] = 1
                    stack.append((child, iter(self.in_place.get(child, ()))))


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else f"a {type(value).__name__}"


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _entries(value: Any) -> list[tuple[str, Any]]:
    return [(str(k), v) for k, v in value.items()] if isinstance(value, Mapping) else []
