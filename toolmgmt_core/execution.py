"""Running one tool call safely: argument repair and validation, handlers, timeouts, results.

Everything a model can get wrong or a handler can do badly ends here as a :class:`ToolCallError`
(never an escaping exception):

- arguments that are not an object, or do not match the tool's JSON Schema, become an
  :class:`InvalidArgumentsError` naming the field, what was expected and what was given;
- a JSON *string* where the schema wants an object or array (a common model slip, for the whole
  arguments or a nested field) is parsed once, then validated;
- a ``null`` for an optional field whose schema refuses null (what OpenAI strict mode sends for a
  field the model leaves out, since it makes every optional field nullable) is dropped, at any
  depth, when dropping it removes errors and adds none; a required field's null still fails;
- a handler that raises, or returns an MCP-style ``{"isError": true, ...}`` result, becomes a
  :class:`ToolExecutionError` (``kind="tool"``); a handler that raises a :class:`ToolCallError`
  itself (an upstream that is down) passes through unchanged;
- a handler that runs longer than its timeout becomes a :class:`ToolTimeoutError`. Sync handlers
  run in a worker thread so a slow one never blocks the event loop; Python cannot kill a thread,
  so a timed-out sync handler finishes in the background and its result is dropped.

Untrusted schemas and arguments cannot stall the process: validation resolves no remote
reference and runs regexes in a bounded engine (:mod:`toolmgmt_core.schema_guard`), stops at
its deadline, and leaves the event loop when it could take a while (:func:`check_arguments`).
Each sync tool runs on threads of its own, at most ``Tool.max_concurrency`` at once (default
:data:`DEFAULT_TOOL_CONCURRENCY`): a tool whose calls hang holds only its own threads, and once
every one of them is held by a call that timed out it answers ``tool_unavailable`` at once,
while every other tool runs on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import referencing.exceptions
from jsonschema.exceptions import ValidationError, relevance

from toolmgmt_core.control import reraise_control_flow
from toolmgmt_core.errors import (
    InvalidArgumentsError,
    ToolCallError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.schema_guard import (
    MAX_ARGUMENT_DEPTH,
    ValidationTimeout,
    argument_validator,
    json_depth,
    uses_regex,
    validation_deadline,
)
from toolmgmt_core.tool import Tool
from toolmgmt_core.truncation import to_jsonable

__all__ = [
    "DEFAULT_TOOL_CONCURRENCY",
    "MAX_REPORTED_ERRORS",
    "ToolResult",
    "check_arguments",
    "clip",
    "drop_refused_nulls",
    "dumps_compact",
    "is_small",
    "off_loop",
    "run_handler",
    "run_sync",
    "to_jsonable",
    "validate_arguments",
]

MAX_REPORTED_ERRORS = 3
"""At most this many schema violations are named in one error message."""

_VALUE_CHARS = 60
_T = TypeVar("_T")

DEFAULT_TOOL_CONCURRENCY = 8
"""Calls of one sync tool that run at once when the tool sets no ``max_concurrency``."""

_SMALL_NODES = 2_000
_SMALL_CHARS = 64_000
_MAX_LANES = 256

# Sync handlers run on their tool's own threads (``_Lane``), never in the loop's default
# executor: ``asyncio.run`` waits for its default executor on exit, so a hung handler would
# turn a timeout into a hang. Validation and result shaping of large values run here: their
# work is bounded (deadlines, regex time limits), so this pool never stays blocked.
_WORK_POOL = concurrent.futures.ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="toolmgmt-work"
)
_SYNC_BRIDGE_POOL = concurrent.futures.ThreadPoolExecutor(
    max_workers=16, thread_name_prefix="toolmgmt-sync"
)


@dataclass
class ToolResult:
    """The outcome of one call, ready to send back to the model."""

    content: str
    """The text sent to the model (JSON for structured values and for errors)."""
    value: Any = None
    """The result as a JSON-compatible value (for an error, the error object)."""
    is_error: bool = False
    """Whether the call failed (see ``error``)."""
    error: ToolCallError | None = None
    """The failure, when there was one; ``error.kind`` tells gateway from tool errors."""
    tool_name: str = ""
    """The tool that ran (the real tool for ``execute_tool``), or the name that was asked for."""
    truncated: bool = False
    """Whether ``content`` was cut to fit a budget."""
    tokens: int = 0
    """Tokens of ``content``."""
    original_tokens: int = 0
    """Tokens of the result before any truncation."""
    note: str | None = None
    """What happened besides cutting, for logs (``SummaryFailed: ...`` when a summary failed)."""

    def to_message(self) -> str:
        """The text to put in the tool-result message for the model."""
        return self.content


def dumps_compact(value: Any) -> str:
    """JSON without spaces: what a model reads most cheaply."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


# -- validation -------------------------------------------------------------------------------

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
            see :data:`~toolmgmt_core.schema_guard.PATTERN_TIME_LIMIT`).

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
    arguments = json.loads(dumps_compact(arguments)) if repair else dict(arguments)
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


def is_small(value: Any) -> bool:
    """Whether ``value`` is cheap to handle on the event loop: at most a few thousand JSON
    nodes and characters (measured only that far, so a huge value costs no more to test)."""
    nodes = chars = 0
    stack = [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, Mapping):
            chars += sum(len(k) for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif not isinstance(item, int | float | bool) and item is not None:
            return False  # an object whose conversion could cost anything
        if nodes > _SMALL_NODES or chars > _SMALL_CHARS:
            return False
    return True


async def off_loop(fn: Callable[[], _T]) -> _T:
    """``fn()`` on a worker thread (with this context), so the event loop keeps serving others.

    For bounded CPU work only (validation, result shaping): the pool is small and shared.
    """
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(_WORK_POOL, context.run, fn)


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


# -- handlers ---------------------------------------------------------------------------------


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


def _error_text(value: Mapping[str, Any]) -> str:
    for key in ("message", "error", "content", "text"):
        item = value.get(key)
        if isinstance(item, str) and item:
            return item
        if isinstance(item, list):
            texts = [c.get("text", "") for c in item if isinstance(c, Mapping)]
            if any(texts):
                return " ".join(t for t in texts if t)
    return dumps_compact(value)


class _Lane:
    """The threads of one sync tool: at most ``limit`` of its calls run at once.

    A call that times out keeps its thread (Python cannot stop a thread) and counts as hung
    until it returns; when every thread is held by a hung call the tool is reported
    unavailable at once rather than queueing calls that would only time out too.
    """

    def __init__(self, name: str, limit: int) -> None:
        self.limit = limit
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=limit, thread_name_prefix=f"toolmgmt-tool-{name[:24]}"
        )
        self.active = 0
        """Calls submitted and not finished."""
        self.hung: set[concurrent.futures.Future[Any]] = set()
        """Calls that timed out and still run."""
        self.lock = threading.Lock()

    def submit(self, call: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        with self.lock:
            self.active += 1
        future = self.executor.submit(call)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        with self.lock:
            self.active -= 1
            self.hung.discard(future)

    def abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """``future`` timed out: cancel it if it has not started, else count it as hung."""
        if future.cancel():
            return
        with self.lock:
            if not future.done():
                self.hung.add(future)

    @property
    def blocked(self) -> bool:
        """Whether every thread is held by a call that timed out."""
        with self.lock:
            return len(self.hung) >= self.limit


_LANES: OrderedDict[tuple[str, int], tuple[Callable[..., Any], _Lane]] = OrderedDict()
_LANES_LOCK = threading.Lock()


def _lane(tool: Tool, handler: Callable[..., Any]) -> _Lane:
    """``tool``'s lane, made on its first sync call; at most ``_MAX_LANES`` idle ones are kept."""
    key = (tool.name, id(handler))  # the handler is kept in the entry, so its id stays its own
    with _LANES_LOCK:
        entry = _LANES.get(key)
        if entry is not None and entry[0] is handler:
            _LANES.move_to_end(key)
            return entry[1]
        lane = _Lane(tool.name, tool.max_concurrency or DEFAULT_TOOL_CONCURRENCY)
        _LANES[key] = (handler, lane)
        if len(_LANES) > _MAX_LANES:
            for old_key, (_, old) in list(_LANES.items())[: len(_LANES) - _MAX_LANES]:
                if old.active == 0:  # a lane with calls in flight (or hung) stays
                    del _LANES[old_key]
                    old.executor.shutdown(wait=False)
        return lane


async def _run_on_lane(
    tool: Tool, handler: Callable[..., Any], call: Callable[[], Any], timeout: float | None
) -> Any:
    lane = _lane(tool, handler)
    if lane.blocked:
        raise ToolUnavailableError(
            f"Tool {tool.name!r} is not responding: its last {lane.limit} calls timed out and "
            "are still running, so it takes no more calls for now. Use another tool.",
            tool_name=tool.name,
        )
    future = lane.submit(call)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    except (asyncio.TimeoutError, TimeoutError, asyncio.CancelledError):
        lane.abandon(future)
        raise


async def run_handler(
    tool: Tool, arguments: Mapping[str, Any], timeout: float | None, *, stated: float | None = None
) -> Any:
    """Run ``tool``'s handler with ``arguments`` as keyword arguments; return its value.

    Args:
        tool: the tool.
        arguments: validated arguments.
        timeout: seconds left for the handler (None: no limit).
        stated: the timeout to name in the error message (default ``timeout``).

    Raises:
        ToolUnavailableError: the tool has no handler, or its calls keep hanging.
        ToolTimeoutError: it took longer than ``timeout`` seconds.
        ToolExecutionError: it raised, or returned ``{"isError": true, ...}``.
        ToolCallError: whatever the handler raised of that family, unchanged.
    """
    handler = tool.handler
    if handler is None:
        raise ToolUnavailableError(
            f"Tool {tool.name!r} has no handler here, so it cannot be run; use another tool.",
            tool_name=tool.name,
        )
    try:
        if _is_async_callable(handler):
            value = await asyncio.wait_for(handler(**arguments), timeout)
        else:
            context = contextvars.copy_context()
            call = functools.partial(context.run, handler, **arguments)
            value = await _run_on_lane(tool, handler, call, timeout)
        if inspect.isawaitable(value):  # a sync callable that returned a coroutine
            value = await asyncio.wait_for(value, timeout)
    except (asyncio.TimeoutError, TimeoutError) as exc:
        limit = stated if stated is not None else timeout
        raise ToolTimeoutError(
            f"Tool {tool.name!r} did not finish within {limit or 0:g}s and was stopped. Try "
            "narrower arguments, or another tool.",
            tool_name=tool.name,
        ) from exc
    except ToolCallError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        reraise_control_flow(exc)
        raise ToolExecutionError(
            f"Tool {tool.name!r} failed: {type(exc).__name__}: {_exception_text(exc)}",
            tool_name=tool.name,
        ) from exc
    if isinstance(value, Mapping) and True in (value.get("isError"), value.get("is_error")):
        raise ToolExecutionError(
            f"Tool {tool.name!r} reported an error: {_error_text(value)}", tool_name=tool.name
        )
    return value


def _exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when that itself fails (an exception is untrusted too)."""
    try:
        return str(exc).strip() or "(no message)"
    except Exception:
        return "(its message could not be read)"


def run_sync(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` to completion from sync code, even when a loop is already running.

    Inside a running loop (a notebook, an async framework calling sync code) it runs on a
    fresh loop in a worker thread, since the running loop cannot be re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    context = contextvars.copy_context()  # the caller's context (a framework's run) goes along
    return _SYNC_BRIDGE_POOL.submit(context.run, asyncio.run, coroutine).result()
