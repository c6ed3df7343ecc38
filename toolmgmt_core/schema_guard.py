"""What a tool's JSON Schema may hold, and a validator that can do no I/O and cannot hang.

Tool schemas come from third parties (MCP upstreams, OpenAPI exports, other people's code), so
they are untrusted input. :func:`check_tool_schema` refuses, when a tool is made (so the tool is
skipped and reported, never half-added):

- a ``$ref`` / ``$dynamicRef`` / ``$recursiveRef`` that is not a local fragment (``#/...`` or an
  ``#anchor``) resolving inside the schema itself: a remote or file reference would make
  validation fetch it at call time (SSRF, local file read) and echo what it fetched;
- a ``$ref`` cycle that never goes into a property or an item (validation would never end);
- a ``$schema`` that is not a known JSON Schema dialect;
- a ``pattern`` / ``patternProperties`` regex the bounded engine cannot compile, and
  ``unevaluatedProperties`` beside ``patternProperties`` (jsonschema matches those regexes with
  the unbounded ``re`` engine there);
- a schema nested deeper than :data:`MAX_SCHEMA_DEPTH` or longer than :data:`MAX_SCHEMA_CHARS`
  (:func:`check_schema_shape`, which runs first, before anything recursive touches it).

:func:`argument_validator` builds the validator arguments are checked with: references resolve
through a registry that retrieves nothing (defence in depth: no schema can make validation do
I/O, whatever slipped past the check), regexes run in the ``regex`` engine with a time limit,
``uniqueItems`` is checked by hashing (jsonschema falls back to comparing every pair), and every
keyword checks the deadline set by :func:`validation_deadline`. ``format`` is not asserted (no
format checker), so no format check can do I/O either.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_SCHEMA_CHARS",
    "MAX_SCHEMA_DEPTH",
    "PATTERN_TIME_LIMIT",
    "ValidationTimeout",
    "argument_validator",
    "check_schema_shape",
    "check_tool_schema",
    "json_depth",
    "uses_regex",
    "validation_deadline",
]

MAX_SCHEMA_DEPTH = 100
"""Deepest nesting of JSON containers a tool schema may have."""

MAX_SCHEMA_CHARS = 1_000_000
"""Longest a tool schema may be, as compact JSON."""

MAX_ARGUMENT_DEPTH = 100
"""Deepest nesting of JSON containers a call's arguments may have."""

PATTERN_TIME_LIMIT = 0.5
"""Seconds one regex match of a schema ``pattern`` may take; a slower one stops validation."""

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
_REGEX_KEYS = ("pattern", "patternProperties")


class ValidationTimeout(Exception):
    """Validation ran past its deadline (or one regex match past :data:`PATTERN_TIME_LIMIT`)."""

    def __init__(self, pattern: str | None = None) -> None:
        super().__init__(pattern or "deadline")
        self.pattern = pattern
        """The regex that took too long, when a regex did."""


# -- the check when a tool is made ------------------------------------------------------------


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


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(uri)  # type: ignore[call-arg]


NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
"""A registry that knows only what it is given and fetches nothing."""

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


def check_tool_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` could make validation do I/O, loop or hang, or None when it cannot.

    The answer reads after "parameters ": "at properties/a/$ref: only local references ...".
    """
    problem = check_schema_shape(schema)
    if problem is not None:
        return problem
    try:
        _Walk(schema).run()
    except _Refused as refused:
        return str(refused)
    return None


class _Refused(Exception):
    """A schema :class:`_Walk` refuses; the message says where and why."""


class _Walk:
    """One schema-aware walk over a schema: references, dialects, regexes and cycles."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.root = NO_RETRIEVAL.resolver_with_root(_SPEC.create_resource(schema))
        self.done: set[int] = set()
        self.in_place: dict[int, list[int]] = {}
        self.has_pattern_properties = False
        self.has_unevaluated = False

    def fail(self, where: list[str], problem: str) -> _Refused:
        return _Refused(f"at {'/'.join(where) or '(root)'}: {problem}")

    def run(self) -> None:
        self.visit(self.schema, self.root, [])
        if self.has_pattern_properties and self.has_unevaluated:
            raise self.fail(
                [],
                "unevaluatedProperties beside patternProperties is not supported (those "
                "regexes could not be time-limited); use additionalProperties instead.",
            )
        self._refuse_cycles()

    def visit(self, node: Any, resolver: Any, where: list[str]) -> None:
        if not isinstance(node, Mapping) or id(node) in self.done:
            return
        self.done.add(id(node))
        edges = self.in_place.setdefault(id(node), [])
        dialect = node.get("$schema")
        if dialect is not None:
            try:
                referencing.jsonschema.specification_with(dialect)
            except (referencing.jsonschema.UnknownDialect, TypeError) as exc:
                raise self.fail(
                    where + ["$schema"],
                    f"unknown $schema {str(dialect)[:80]!r}; use a JSON Schema dialect URI such "
                    'as "https://json-schema.org/draft/2020-12/schema", or leave it out.',
                ) from exc
        try:
            resolver = resolver.in_subresource(_SPEC.create_resource(node))
        except Exception as exc:  # a malformed $id
            raise self.fail(where + ["$id"], f"unusable $id: {exc}") from exc
        for key in _REF_KEYS:
            if key in node:
                ref = node[key]
                target = self._resolve(ref, resolver, where + [key])
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
            return resolver.lookup(ref)
        except referencing.exceptions.Unresolvable as exc:
            raise self.fail(
                where, f"reference {ref[:80]!r} points at nothing inside the schema."
            ) from exc

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
            _compiled(pattern)
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


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _entries(value: Any) -> list[tuple[str, Any]]:
    return [(str(k), v) for k, v in value.items()] if isinstance(value, Mapping) else []


def uses_regex(schema: Mapping[str, Any]) -> bool:
    """Whether validating against ``schema`` may run a regex (``pattern``/``patternProperties``)."""
    stack: list[Any] = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if any(isinstance(item.get(k), str | Mapping) for k in _REGEX_KEYS):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# -- the validator ----------------------------------------------------------------------------

_DEADLINE: ContextVar[float | None] = ContextVar("toolmgmt_validation_deadline", default=None)


@contextlib.contextmanager
def validation_deadline(seconds: float | None) -> Iterator[None]:
    """Inside the block, validation stops with :class:`ValidationTimeout` after ``seconds``
    (None: only each regex match is limited, to :data:`PATTERN_TIME_LIMIT`)."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + max(seconds, 0.0))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _check_deadline() -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise ValidationTimeout()


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    return regex.compile(pattern)


def _search(pattern: str, text: str) -> bool:
    """``re.search`` semantics in the ``regex`` engine, within the time left (GIL released)."""
    deadline = _DEADLINE.get()
    limit = PATTERN_TIME_LIMIT
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
        if limit <= 0:
            raise ValidationTimeout(pattern)
    try:
        return _compiled(pattern).search(text, timeout=limit, concurrent=True) is not None
    except TimeoutError as exc:
        raise ValidationTimeout(pattern) from exc


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(_search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            unexpected = ", ".join(repr(each) for each in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({unexpected} {verb} unexpected)"
            )


def _canonical(value: Any) -> Any:
    """A hashable form under which two JSON values are equal exactly when JSON Schema says so
    (``1 == 1.0``, ``true != 1``, objects by content)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", int(value) if float(value).is_integer() else value)
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_canonical(v) for v in value))
    return ("other", repr(value))


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _with_deadline(keyword: Callable[..., Any]) -> Callable[..., Any]:
    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _check_deadline()
        return keyword(validator, value, instance, schema) or ()

    return checked


_OWN = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}

_BoundedValidator: Any = validators.extend(
    Draft202012Validator,
    {
        key: _with_deadline(_OWN.get(key, keyword))
        for key, keyword in Draft202012Validator.VALIDATORS.items()
    },
)


def argument_validator(schema: Mapping[str, Any]) -> Any:
    """A 2020-12 validator for ``schema`` that does no I/O and stops at the deadline."""
    return _BoundedValidator(schema, registry=NO_RETRIEVAL)
