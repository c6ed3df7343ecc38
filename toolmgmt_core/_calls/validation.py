"""Checking a call's arguments against the tool's JSON Schema, repairing common model slips.

- arguments that are not an object, or do not match the tool's JSON Schema, become an
  :class:`~toolmgmt_core.InvalidArgumentsError` naming the field, what was expected and
  what was given (at most :data:`MAX_REPORTED_ERRORS` of them);
- a JSON *string* where the schema wants an object or array (a common model slip, for the whole
  arguments or a nested field) is parsed once, then validated;
- a ``null`` for an optional field whose schema refuses null (what OpenAI strict mode sends for a
  field the model leaves out, since it makes every optional field nullable) is dropped, at any
  depth, when dropping it removes errors and adds none; a required field's null still fails
  (:mod:`toolmgmt_core._calls.nulls`).

Untrusted schemas and arguments cannot stall the process: validation resolves no remote
reference and runs regexes in a bounded engine (:mod:`toolmgmt_core._model.schema_validator`), stops
at
its deadline, and leaves the event loop when it could take a while (:func:`check_arguments`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

import referencing.exceptions
from jsonschema.exceptions import ValidationError, relevance

from toolmgmt_core._calls.nulls import drop_nulls
from toolmgmt_core._calls.sync import is_small, off_loop
from toolmgmt_core._model.errors import InvalidArgumentsError, ToolUnavailableError
from toolmgmt_core._model.schema_guard import MAX_ARGUMENT_DEPTH, json_depth
from toolmgmt_core._model.schema_validator import (
    ValidationTimeout,
    argument_validator,
    check_deadline,
    uses_regex,
    validation_deadline,
)
from toolmgmt_core._model.tool import Tool

__all__ = [
    "MAX_REPORTED_ERRORS",
    "ON_LOOP_SECONDS",
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
        check_deadline()  # each parse costs what its string's length does
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


def drop_refused_nulls(arguments: Any, schema: Mapping[str, Any]) -> Any:
    """``arguments`` without the ``null`` of each optional field whose ``schema`` refuses null.

    What :func:`validate_arguments` does before its verdict, for callers that validate
    elsewhere; arguments that are not an object come back unchanged.
    """
    if not isinstance(arguments, dict):
        return arguments
    validator = _validator(schema)
    errors = list(validator.iter_errors(arguments))
    return drop_nulls(arguments, validator, errors)[0] if errors else arguments


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
            see :data:`~toolmgmt_core._model.schema_validator.PATTERN_TIME_LIMIT`).

    Raises:
        InvalidArgumentsError: naming each bad field (at most three), what it expected and what
            it got; or saying the arguments nest too deeply or could not be checked in time.
    """
    try:
        return _checked(tool, arguments, repair, hint, time_limit)
    except ValidationTimeout as exc:
        raise _out_of_time(tool, exc.pattern, hint) from exc


def _checked(
    tool: Tool, arguments: Any, repair: bool, hint: str, time_limit: float | None
) -> dict[str, Any]:
    """:func:`validate_arguments`, but running out of time raises :class:`ValidationTimeout`."""
    try:
        with validation_deadline(time_limit):
            return _validate(tool, arguments, repair, hint)
    except RecursionError as exc:  # what the depth check below did not foresee
        raise _too_deep(tool, hint) from exc
    except referencing.exceptions.Unresolvable as exc:  # a schema changed behind the check
        raise ToolUnavailableError(
            f"Tool {tool.name!r} has a schema that refers outside itself, so its arguments "
            "cannot be checked and it does not run; use another tool.",
            tool_name=tool.name,
        ) from exc


def _out_of_time(tool: Tool, pattern: str | None, hint: str) -> InvalidArgumentsError:
    slow = f" against the pattern {clip(repr(pattern))}" if pattern else ""
    return InvalidArgumentsError(
        f"The arguments for {tool.name!r} could not be checked{slow} in time: the tool's "
        f"schema is too slow for them. Send shorter or simpler values, or use another "
        f"tool.{hint}",
        tool_name=tool.name,
    )


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
        arguments, errors = drop_nulls(arguments, validator, errors)
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


ON_LOOP_SECONDS = 0.05
"""Seconds a check may hold the event loop; one that takes longer starts over on a thread."""

_OFF_LOOP_GRACE = 1.0
"""Seconds past its deadline a check on a thread is waited for (its own deadline stops it)."""


def _quick(tool: Tool, arguments: Any) -> bool:
    """Whether checking ``arguments`` is certainly quick: no regex in the schema, and few
    nodes in what the arguments parse to (a JSON string is measured as its value)."""
    if _cached(tool.parameters)[2] or not is_small(arguments):
        return False
    if isinstance(arguments, str):
        try:
            ok, parsed = _parse_json(arguments)
        except RecursionError:
            return False
        return not ok or is_small(parsed)
    return True


async def check_arguments(
    tool: Tool, arguments: Any, *, hint: str = "", time_limit: float | None = None
) -> dict[str, Any]:
    """:func:`validate_arguments` from async code, within ``time_limit`` seconds.

    A check that is certainly quick runs on the event loop for at most :data:`ON_LOOP_SECONDS`;
    any other check (or one that ran past that) runs on a thread of the tool's own work pool
    (:func:`~toolmgmt_core._calls.sync.off_loop`), so one call's slow validation stalls neither the
    other calls nor the other tools' checks, and is not waited for past its deadline.
    """
    started = time.monotonic()
    deadline = None if time_limit is None else started + time_limit
    if _quick(tool, arguments):
        here = ON_LOOP_SECONDS if time_limit is None else min(ON_LOOP_SECONDS, time_limit)
        try:
            return _checked(tool, arguments, True, hint, here)
        except ValidationTimeout:
            pass  # too slow for the loop: start over on a thread, with the time left

    def check() -> dict[str, Any]:
        left = None if deadline is None else deadline - time.monotonic()
        return validate_arguments(tool, arguments, hint=hint, time_limit=left)

    wait = None if deadline is None else max(deadline - time.monotonic(), 0) + _OFF_LOOP_GRACE
    try:
        return await asyncio.wait_for(off_loop(check, lane=tool.name), wait)
    except (asyncio.TimeoutError, TimeoutError) as exc:  # queued behind the tool's own checks
        raise _out_of_time(tool, None, hint) from exc
