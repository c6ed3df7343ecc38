"""Checking a call's arguments against the tool's JSON Schema, repairing common model slips.

- arguments that are not an object, or do not match the tool's JSON Schema, become an
  :class:`~toolmgmt_core.errors.InvalidArgumentsError` naming the field, what was expected and
  what was given (at most :data:`MAX_REPORTED_ERRORS` of them);
- a JSON *string* where the schema wants an object or array (a common model slip, for the whole
  arguments or a nested field) is parsed once, then validated;
- a ``null`` for an optional field whose schema refuses null (what OpenAI strict mode sends for a
  field the model leaves out, since it makes every optional field nullable) is dropped, at any
  depth, when dropping it removes errors and adds none; a required field's null still fails.

Untrusted schemas and arguments cannot stall the process: validation resolves no remote
reference and runs regexes in a bounded engine (:mod:`toolmgmt_core.schema_validator`), stops at
its deadline, and leaves the event loop when it could take a while (:func:`check_arguments`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import referencing.exceptions
from jsonschema.exceptions import ValidationError, relevance

from toolmgmt_core.errors import InvalidArgumentsError, ToolUnavailableError
from toolmgmt_core.schema_guard import MAX_ARGUMENT_DEPTH, json_depth
from toolmgmt_core.schema_validator import (
    ValidationTimeout,
    argument_validator,
    uses_regex,
    validation_deadline,
)
from toolmgmt_core.sync import is_small, off_loop
from toolmgmt_core.tool import Tool

__all__ = [
    "MAX_REPORTED_ERRORS",
    "check_arguments",
    "clip",
    "drop_refused_nulls",
    "validate_arguments",
]

MAX_REPORTED_ERRORS = 3
"""At most this many schema violations are named in one error message."""

_VALUE_CHARS = 60

_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any, bool]] = {}


def _cached(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any, bool]:
    """(schema, its bounded validator, whether it runs regexes), built once per schema."""
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached
    entry = (schema, argument_validator(schema), uses_regex(schema))
    if len(_VALIDATORS) > 4096:
        _VALIDATORS.clear()
    _VALIDATORS[id(schema)] = entry
    return entry


def _validator(schema: Mapping[str, Any]) -> Any:
    return _cached(schema)[1]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def clip(text: str, limit: int = _VALUE_CHARS) -> str:
    """``text`` cut to ``limit`` characters with ``…``: what the model sent, echoed back in an
    error, must not cost more than the mistake."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any) -> str:
    return clip(json.dumps(value, ensure_ascii=False, default=str))


def _field(path: Any) -> str:
    parts = list(path)
    if not parts:
        return "(arguments)"
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error: ValidationError) -> str:
    """One violation in words a model can act on: field, expected, given."""
    where = _field(error.absolute_path)
    given = error.instance
    kind = error.validator
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        prefix = f"{where}." if error.absolute_path else ""
        return f"{prefix}{missing}: required field is missing"
    if kind == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else str(expected)
        got = "null" if given is None else f"{_json_type(given)} {_short(given)}"
        return f"{where}: expected {expected_text}, got {got}"
    if kind in ("enum", "const"):
        options = error.validator_value if kind == "enum" else [error.validator_value]
        valid = ", ".join(_short(o) for o in options)
        return f"{where}: expected one of {valid}, got {_short(given)}"
    if kind == "additionalProperties" and isinstance(given, Mapping):
        allowed = list((error.schema.get("properties") or {}).keys())
        extra = [k for k in given if k not in allowed]
        valid = ", ".join(allowed) or "(none)"
        unexpected = ", ".join(clip(k) for k in extra[:MAX_REPORTED_ERRORS])
        if len(extra) > MAX_REPORTED_ERRORS:
            unexpected += f" and {len(extra) - MAX_REPORTED_ERRORS} more"
        return f"{where}: unexpected field(s) {unexpected}; valid fields: {valid}"
    if kind in ("maxItems", "minItems") and isinstance(given, list):
        bound = "at most" if kind == "maxItems" else "at least"
        return f"{where}: expected {bound} {error.validator_value} items, got {len(given)}"
    message = error.message
    if len(message) > 2 * _VALUE_CHARS:  # jsonschema quotes the whole value it refused
        message = message.replace(repr(given), _short(given))
        message = clip(message, 2 * _VALUE_CHARS)
    return f"{where}: {message} (given {_short(given)})"


def _parse_json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, TypeError):
        return False, None


def _wants(schema: Any, json_kinds: tuple[str, ...]) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind in json_kinds
    if isinstance(kind, list):
        return any(k in json_kinds for k in kind) and "string" not in kind
    return False


def _set_at(container: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    container[head] = _set_at(container[head], rest, value)
    return container


def _repair(arguments: dict[str, Any], validator: Any) -> dict[str, Any]:
    """Parse, once, every JSON string sitting where the schema wants an object or array."""
    for error in sorted(validator.iter_errors(arguments), key=lambda e: -len(e.absolute_path)):
        if not isinstance(error.instance, str):
            continue
        if error.validator == "type":
            branches = [error.schema]
        elif error.validator in ("anyOf", "oneOf"):  # Optional[dict] and friends
            branches = list(error.validator_value or ())
        else:
            continue
        ok, parsed = _parse_json(error.instance)
        kind = _json_type(parsed)
        if ok and kind in ("object", "array") and any(_wants(b, (kind,)) for b in branches):
            try:
                arguments = _set_at(arguments, list(error.absolute_path), parsed)
            except (KeyError, IndexError, TypeError):  # the path moved under an earlier repair
                continue
    return arguments


def _in_properties(error: ValidationError, key: str) -> bool:
    """Whether ``error`` came from the ``properties`` entry ``key`` (not a map's values)."""
    steps = list(error.absolute_schema_path)
    return any(steps[i] == "properties" and steps[i + 1] == key for i in range(len(steps) - 1))


def _null_fields(errors: list[ValidationError]) -> list[tuple[Any, ...]]:
    """Paths of declared object fields holding a ``null`` their schema refuses."""
    paths: list[tuple[Any, ...]] = []
    stack = list(errors)
    while stack:
        error = stack.pop()
        stack.extend(error.context or ())  # the branches of anyOf/oneOf (Optional[Model])
        path = tuple(error.absolute_path)
        if (
            error.instance is None
            and path
            and isinstance(path[-1], str)
            and _in_properties(error, path[-1])
            and path not in paths
        ):
            paths.append(path)
    return paths


def _without(container: Any, path: tuple[Any, ...]) -> Any:
    """A copy of ``container`` without the dict key at ``path`` (copied along the path only)."""
    head, rest = path[0], path[1:]
    if isinstance(container, dict) and head in container:
        if not rest:
            return {k: v for k, v in container.items() if k != head}
        inner = _without(container[head], rest)
        return None if inner is None else {**container, head: inner}
    if isinstance(container, list) and isinstance(head, int) and 0 <= head < len(container):
        inner = _without(container[head], rest) if rest else None
        return None if inner is None else [*container[:head], inner, *container[head + 1 :]]
    return None


def _error_key(error: ValidationError) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(error.absolute_path), tuple(error.absolute_schema_path)


def _drop_refused_nulls(
    arguments: dict[str, Any], validator: Any, errors: list[ValidationError]
) -> tuple[dict[str, Any], list[ValidationError]]:
    """Drop each ``null`` of an optional field whose schema refuses null.

    The validator decides both what refuses null (``$ref``, ``anyOf``, ``{}`` accepts it...) and
    what is optional: a null is dropped only when that removes errors and adds none, so a
    required field, ``minProperties`` or a dependency keeps its null and its error.
    """
    known = {_error_key(e) for e in errors}
    for path in _null_fields(errors):
        trial = _without(arguments, path)
        if trial is None:
            continue
        after = list(validator.iter_errors(trial))
        keys = {_error_key(e) for e in after}
        if len(after) < len(errors) and keys <= known:
            arguments, errors, known = trial, after, keys
    return arguments, errors


def drop_refused_nulls(arguments: Any, schema: Mapping[str, Any]) -> Any:
    """``arguments`` without the ``null`` of each optional field whose ``schema`` refuses null.

    What :func:`validate_arguments` does before its verdict, for callers that validate
    elsewhere; arguments that are not an object come back unchanged.
    """
    if not isinstance(arguments, dict):
        return arguments
    validator = _validator(schema)
    errors = list(validator.iter_errors(arguments))
    return _drop_refused_nulls(arguments, validator, errors)[0] if errors else arguments


def validate_arguments(
    tool: Tool,
    arguments: Any,
    *,
    repair: bool = True,
    hint: str = "",
    time_limit: float | None = None,
) -> dict[str, Any]:
    """``arguments`` checked against ``tool.parameters``; returns the (repaired) arguments.

    Args:
        tool: the tool being called.
        arguments: what the model sent: a dict, None (no arguments), or a JSON string of one.
        repair: parse JSON strings found where an object or array is wanted, once, first;
            drop ``null`` values of optional fields whose schema refuses null.
        hint: appended to the error message (for example where to find the schema).
        time_limit: seconds the whole check may take (None: only each regex match is limited,
            see :data:`~toolmgmt_core.schema_validator.PATTERN_TIME_LIMIT`).

    Raises:
        InvalidArgumentsError: naming each bad field (at most three), what it expected and what
            it got; or saying the arguments nest too deeply or could not be checked in time.
    """
    try:
        with validation_deadline(time_limit):
            return _validate(tool, arguments, repair, hint)
    except ValidationTimeout as exc:
        slow = f" against the pattern {clip(repr(exc.pattern))}" if exc.pattern else ""
        raise InvalidArgumentsError(
            f"The arguments for {tool.name!r} could not be checked{slow} in time: the tool's "
            f"schema is too slow for them. Send shorter or simpler values, or use another "
            f"tool.{hint}",
            tool_name=tool.name,
        ) from exc
    except RecursionError as exc:  # what the depth check below did not foresee
        raise _too_deep(tool, hint) from exc
    except referencing.exceptions.Unresolvable as exc:  # a schema changed behind the check
        raise ToolUnavailableError(
            f"Tool {tool.name!r} has a schema that refers outside itself, so its arguments "
            "cannot be checked and it does not run; use another tool.",
            tool_name=tool.name,
        ) from exc


def _too_deep(tool: Tool, hint: str) -> InvalidArgumentsError:
    return InvalidArgumentsError(
        f"Arguments for {tool.name!r} nest deeper than {MAX_ARGUMENT_DEPTH} levels; send "
        f"a flatter object.{hint}",
        tool_name=tool.name,
    )


def _validate(tool: Tool, arguments: Any, repair: bool, hint: str) -> dict[str, Any]:
    if json_depth(arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
        raise _too_deep(tool, hint)
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str) and repair:
        ok, parsed = _parse_json(arguments) if arguments.strip() else (True, {})
        if ok:
            if json_depth(parsed, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
                raise _too_deep(tool, hint)
            arguments = parsed
    if not isinstance(arguments, Mapping):
        raise InvalidArgumentsError(
            f"Arguments for {tool.name!r} must be a JSON object of named arguments, got "
            f"{_json_type(arguments)} {_short(arguments)}.{hint}",
            tool_name=tool.name,
        )
    # A JSON round trip: plain dicts and lists the repairs may change, whatever was sent.
    arguments = (
        json.loads(json.dumps(arguments, ensure_ascii=False, default=str))
        if repair
        else dict(arguments)
    )
    validator = _validator(tool.parameters)
    if repair:
        arguments = _repair(arguments, validator)
    errors = list(validator.iter_errors(arguments))
    if errors and repair:  # only a failing call pays for the null repair
        arguments, errors = _drop_refused_nulls(arguments, validator, errors)
    errors.sort(key=relevance)
    if errors:
        described = "; ".join(_describe(e) for e in errors[:MAX_REPORTED_ERRORS])
        more = len(errors) - MAX_REPORTED_ERRORS
        tail = f"; and {more} more" if more > 0 else ""
        raise InvalidArgumentsError(
            f"Invalid arguments for {tool.name!r}: {described}{tail}.{hint}",
            tool_name=tool.name,
        )
    return arguments


async def check_arguments(
    tool: Tool, arguments: Any, *, hint: str = "", time_limit: float | None = None
) -> dict[str, Any]:
    """:func:`validate_arguments` from async code: on the event loop when it is certainly quick
    (small arguments, no regex in the schema), else on a worker thread, so one call's slow
    validation never stalls the others."""
    if not _cached(tool.parameters)[2] and is_small(arguments):
        return validate_arguments(tool, arguments, hint=hint, time_limit=time_limit)
    return await off_loop(
        functools.partial(validate_arguments, tool, arguments, hint=hint, time_limit=time_limit)
    )
