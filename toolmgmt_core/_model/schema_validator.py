"""The validator a call's arguments are checked with: it does no I/O and cannot hang.

:func:`argument_validator` builds a JSON Schema 2020-12 validator whose references resolve
through a registry that retrieves nothing (defence in depth: no schema can make validation do
I/O, whatever slipped past :func:`~toolmgmt_core._model.schema_guard.check_tool_schema`), whose
regexes
run in the ``regex`` engine with a time limit (:data:`PATTERN_TIME_LIMIT`), which checks
``uniqueItems`` by hashing (jsonschema falls back to comparing every pair), and each of whose
keywords checks the deadline set by :func:`validation_deadline`. ``format`` is not asserted (no
format checker), so no format check can do I/O either.

The validator is pinned: jsonschema switches to another draft's stock validator (stdlib ``re``,
no deadline) wherever a subschema names a ``$schema`` (``evolve`` asks ``validator_for``), so a
``"$schema": "...draft-07..."`` next to a catastrophic ``pattern`` would undo every bound above.
Here every subschema, whatever ``$schema`` it names, is checked by this same validator, as JSON
Schema 2020-12 (the dialect tool schemas are read in, see :mod:`toolmgmt_core._model.schema_guard`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import attrs
import referencing
import referencing.exceptions
import regex
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

__all__ = [
    "EXAMPLE_TIME_LIMIT",
    "NO_RETRIEVAL",
    "PATTERN_TIME_LIMIT",
    "ValidationTimeout",
    "argument_validator",
    "check_deadline",
    "compiled_pattern",
    "example_errors",
    "uses_regex",
    "validation_deadline",
]

PATTERN_TIME_LIMIT = 0.5
"""Seconds one regex match of a schema ``pattern`` may take; a slower one stops validation."""

_REGEX_KEYS = ("pattern", "patternProperties")


class ValidationTimeout(Exception):
    """Validation ran past its deadline (or one regex match past :data:`PATTERN_TIME_LIMIT`)."""

    def __init__(self, pattern: str | None = None) -> None:
        super().__init__(pattern or "deadline")
        self.pattern = pattern
        """The regex that took too long, when a regex did."""


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(uri)  # type: ignore[call-arg]


NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
"""A registry that knows only what it is given and fetches nothing."""


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


def check_deadline() -> None:
    """Raise :class:`ValidationTimeout` when the deadline of :func:`validation_deadline` passed
    (for work between keywords, such as parsing a JSON string found in the arguments)."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise ValidationTimeout()


@lru_cache(maxsize=4096)
def compiled_pattern(pattern: str) -> Any:
    """``pattern`` compiled by the ``regex`` engine, once (a schema's check and its validation
    share it)."""
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
        return compiled_pattern(pattern).search(text, timeout=limit, concurrent=True) is not None
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
        check_deadline()
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


_INIT_FIELDS = [
    (field.name, field.alias) for field in attrs.fields(_BoundedValidator) if field.init
]


def _pinned_evolve(self: Any, **changes: Any) -> Any:
    """jsonschema's ``evolve`` without ``validator_for``: the class never changes."""
    for name, alias in _INIT_FIELDS:
        if alias not in changes:
            changes[alias] = getattr(self, name)
    return _BoundedValidator(**changes)


_BoundedValidator.evolve = _pinned_evolve


def argument_validator(schema: Mapping[str, Any]) -> Any:
    """A 2020-12 validator for ``schema`` that does no I/O and stops at the deadline."""
    return _BoundedValidator(schema, registry=NO_RETRIEVAL)


EXAMPLE_TIME_LIMIT = 1.0
"""Seconds checking a tool's input examples against its schema may take, all of them."""

Problem = tuple[list[Any], str]
"""Where in an example (its path) and why it does not match its schema."""


def example_errors(schema: Mapping[str, Any], examples: Sequence[Any]) -> list[Problem | None]:
    """Why each of a tool's input examples (third-party, like its schema) does not match
    ``schema``, or None for one that does.

    Checked as call arguments are, by :func:`argument_validator`, within
    :data:`EXAMPLE_TIME_LIMIT` for all of them, once per schema and examples (formatting a tool
    list asks again on every request): an example that cannot be checked in time, or against
    a schema that refers outside itself, does not match either.
    """
    try:
        key = json.dumps([schema, examples], sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return [([], "it is not JSON")] * len(examples)
    return list(_example_errors(key))


@lru_cache(maxsize=1024)
def _example_errors(key: str) -> tuple[Problem | None, ...]:
    schema, examples = json.loads(key)
    validator = argument_validator(schema)
    out: list[Problem | None] = []
    with validation_deadline(EXAMPLE_TIME_LIMIT):
        for example in examples:
            try:
                error = best_match(validator.iter_errors(example))
            except ValidationTimeout:
                out.append(([], "it could not be checked in time"))
                continue
            except (referencing.exceptions.Unresolvable, RecursionError):
                out.append(([], "it could not be checked against this schema"))
                continue
            out.append(None if error is None else (list(error.absolute_path), error.message))
    return tuple(out)
