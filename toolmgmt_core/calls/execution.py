"""Running one tool call safely: handlers, timeouts, thread lanes, results.

Everything a handler can do badly ends here as a :class:`ToolCallError` (never an escaping
exception); the arguments were checked before (:mod:`toolmgmt_core.calls.validation`):

- a handler that raises, or returns an MCP-style ``{"isError": true, ...}`` result, becomes a
  :class:`ToolExecutionError` (``kind="tool"``); a handler that raises a :class:`ToolCallError`
  itself (an upstream that is down) passes through unchanged;
- a handler that runs longer than its timeout becomes a :class:`ToolTimeoutError`, at the
  timeout. Sync handlers run in a worker thread so a slow one never blocks the event loop;
  Python cannot kill a thread, so a timed-out sync handler finishes in the background and its
  result is dropped. An async handler is cancelled and given :data:`STOP_SECONDS` to stop; one
  that does not (it swallows the cancellation) is left running, never waited for. Either way
  the model is told the call may still complete, so a side effect is not repeated blindly.

Each sync tool runs on threads of its own, at most ``Tool.max_concurrency`` at once (default
:data:`DEFAULT_TOOL_CONCURRENCY`): a tool whose calls hang holds only its own threads, and once
every one of them is held by a call that timed out it answers ``tool_unavailable`` at once,
while every other tool runs on. The threads of all sync tools together are bounded too
(:data:`MAX_SYNC_THREADS`; a tool holding none always gets one), so calls that hang across many
tools cannot pile up threads without end; :func:`hung_threads` counts the threads left running,
by tool, and each one left is logged.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolmgmt_core.calls.control import reraise_control_flow
from toolmgmt_core.model.errors import (
    ToolCallError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.model.tool import Tool

__all__ = [
    "DEFAULT_TOOL_CONCURRENCY",
    "MAX_SYNC_THREADS",
    "STOP_SECONDS",
    "CallClock",
    "ToolResult",
    "dumps_compact",
    "hung_threads",
    "run_handler",
]

DEFAULT_TOOL_CONCURRENCY = 8
"""Calls of one sync tool that run at once when the tool sets no ``max_concurrency``."""

STOP_SECONDS = 1.0
"""Seconds an async handler cancelled at its timeout is given to stop before it is left."""

_MAX_LANES = 256

logger = logging.getLogger("toolmgmt")


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
    """What happened besides cutting, for logs (``SummaryFailed: ...`` when a summary failed,
    ``NotSaved: ...`` when the conversation's record of the call could not be saved)."""
    saved: bool = True
    """False when the call ran but its record (the conversation's loads, result records and
    budget after it) could not be written to the session store: the store was down or slower
    than its deadlines. The record is kept in this process and written with the next change;
    another replica does not see it meanwhile."""

    def to_message(self) -> str:
        """The text to put in the tool-result message for the model."""
        return self.content


def dumps_compact(value: Any) -> str:
    """JSON without spaces: what a model reads most cheaply."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


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


# Sync handlers run on their tool's own threads (``_Lane``), never in the loop's default
# executor: ``asyncio.run`` waits for its default executor on exit, so a hung handler would
# turn a timeout into a hang.
class _Lane:
    """The threads of one sync tool: at most ``limit`` of its calls hold a thread at once.

    A call that times out keeps its thread (Python cannot stop a thread) and counts as hung
    until it returns; when every thread is held by a hung call the tool is reported
    unavailable at once rather than queueing calls that would only time out too. Threads are
    also counted across lanes (:data:`MAX_SYNC_THREADS`, see :func:`_admit`).
    """

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=limit, thread_name_prefix=f"toolmgmt-tool-{name[:24]}"
        )
        self.active = 0
        """Calls admitted (each holds one of the lane's threads) and not finished."""
        self.hung: set[concurrent.futures.Future[Any]] = set()
        """Calls that timed out and still run."""

    def submit(self, call: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Run an admitted call (see :func:`_admit`) on one of the lane's threads."""
        future = self.executor.submit(call)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        global _THREADS, _HUNG
        with _THREADS_LOCK:
            self.active -= 1
            _THREADS -= 1
            if future in self.hung:
                self.hung.discard(future)
                _HUNG -= 1

    def abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """``future`` timed out: cancel it if it has not started, else count it as hung."""
        global _HUNG
        if future.cancel():
            return
        with _THREADS_LOCK:
            if future.done() or future in self.hung:
                return
            self.hung.add(future)
            _HUNG += 1
            mine, everyone = len(self.hung), _HUNG
        logger.warning(
            "toolmgmt: tool %r: a call that timed out still runs on its thread (%d of its %d "
            "threads hung; %d hung in this process)",
            self.name,
            mine,
            self.limit,
            everyone,
        )

    @property
    def blocked(self) -> bool:
        """Whether every thread is held by a call that timed out."""
        with _THREADS_LOCK:
            return len(self.hung) >= self.limit


MAX_SYNC_THREADS = 64
"""Threads that sync handlers may hold in this process, all tools together (running, or left
running by calls that timed out). A tool holding no thread always gets one, so every tool runs
on; past this count a tool that holds threads waits for one of its own to finish (or answers
``tool_unavailable`` at once while its calls that timed out fill the process's share). Set it
before the first call to change it."""

_THREADS = 0  # threads held by sync handlers, every lane together
_HUNG = 0  # of them, held by calls that timed out
_THREADS_LOCK = threading.Lock()
_LANES: OrderedDict[tuple[str, int], tuple[Callable[..., Any], _Lane]] = OrderedDict()
_LANES_LOCK = threading.Lock()
_ADMIT_POLL = 0.01  # seconds between tries of a call waiting for a thread


def hung_threads() -> dict[str, int]:
    """Threads left running by sync calls that timed out, by tool name (only tools that have
    some): what a health or metrics endpoint reports. Each counts against its tool's
    ``max_concurrency`` and :data:`MAX_SYNC_THREADS` until its handler returns."""
    counts: dict[str, int] = {}
    with _LANES_LOCK, _THREADS_LOCK:
        for _, lane in _LANES.values():
            if lane.hung:
                counts[lane.name] = counts.get(lane.name, 0) + len(lane.hung)
    return counts


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


def _admit(lane: _Lane) -> bool:
    """Give the call a thread of ``lane`` now if it may have one; whether it got one.

    Raises:
        ToolUnavailableError: the tool's calls that timed out hold all its threads, or (with
            this process at :data:`MAX_SYNC_THREADS`) as many as the process allows.
    """
    global _THREADS
    with _THREADS_LOCK:
        if len(lane.hung) >= lane.limit or (lane.hung and _HUNG >= MAX_SYNC_THREADS):
            held, everyone = len(lane.hung), _HUNG
        elif lane.active >= lane.limit or (lane.active and _THREADS >= MAX_SYNC_THREADS):
            return False  # wait for a thread of its own to finish
        else:
            lane.active += 1
            _THREADS += 1
            return True
    why = (
        f"its last {held} calls timed out and are still running"
        if held >= lane.limit
        else f"{held} of its calls timed out and are still running, and this process holds "
        f"{everyone} such threads (at most {MAX_SYNC_THREADS})"
    )
    raise ToolUnavailableError(
        f"Tool {lane.name!r} is not responding: {why}, so it takes no more calls for now. Use "
        "another tool.",
        tool_name=lane.name,
    )


async def _run_on_lane(
    tool: Tool, handler: Callable[..., Any], call: Callable[[], Any], timeout: float | None
) -> Any:
    lane = _lane(tool, handler)
    deadline = None if timeout is None else time.monotonic() + timeout
    while not _admit(lane):  # the tool's or the process's threads are all busy: wait a little
        if deadline is not None and time.monotonic() >= deadline:
            raise ToolUnavailableError(  # it never started: nothing of it may still complete
                f"Tool {tool.name!r} did not start within its {timeout:g}s: its threads were "
                f"all busy ({lane.active} of at most {lane.limit} in use; this process's sync "
                f"tools hold {_THREADS} of at most {MAX_SYNC_THREADS}). Try it again shortly, "
                "or use another tool.",
                tool_name=tool.name,
            )
        await asyncio.sleep(_ADMIT_POLL)
    future = lane.submit(call)
    remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), remaining)
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
    limit = stated if stated is not None else timeout
    try:
        if _is_async_callable(handler):
            value = await _within(tool, handler(**arguments), timeout)
        else:
            context = contextvars.copy_context()
            call = functools.partial(context.run, handler, **arguments)
            try:
                value = await _run_on_lane(tool, handler, call, timeout)
            except (asyncio.TimeoutError, TimeoutError) as exc:  # the thread runs on
                raise _Unstopped() from exc
        if inspect.isawaitable(value):  # a sync callable that returned a coroutine
            value = await _within(tool, value, timeout)
    except _Unstopped as exc:
        raise ToolTimeoutError(
            f"Tool {tool.name!r} did not finish within {limit or 0:g}s, and it may still be "
            "running and complete: if it changes anything, check whether it did before "
            "calling it again. Otherwise try narrower arguments, or another tool.",
            tool_name=tool.name,
        ) from exc
    except (asyncio.TimeoutError, TimeoutError) as exc:
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
    if _reported_error(value):
        raise ToolExecutionError(
            f"Tool {tool.name!r} reported an error: {_error_text(value)}", tool_name=tool.name
        )
    return value


def _reported_error(value: Any) -> bool:
    """Whether ``value`` is an MCP-style ``{"isError": true}``; a value that cannot even be
    asked (its ``get`` raises) is a result the handler returned, so the call is done."""
    if not isinstance(value, Mapping):
        return False
    try:
        return True in (value.get("isError"), value.get("is_error"))
    except Exception as exc:
        reraise_control_flow(exc)
        return False


class _Unstopped(Exception):
    """A handler past its timeout that could not be stopped: it may still complete."""


_LEFT_RUNNING: set[asyncio.Future[Any]] = set()
"""Async handlers that ignored their cancellation: referenced, so they are not collected."""


async def _within(tool: Tool, awaitable: Any, timeout: float | None) -> Any:
    """Await ``awaitable`` as a task for at most ``timeout`` seconds.

    ``asyncio.wait_for`` waits for a cancelled task to end, forever when the handler swallows
    the cancellation; here the task is cancelled at the timeout, given :data:`STOP_SECONDS`,
    and then left running (kept referenced, logged).

    Raises:
        asyncio.TimeoutError: it was cancelled and stopped.
        _Unstopped: it did not stop.
    """
    task = asyncio.ensure_future(_carried(awaitable))
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if done:
            return _delivered(task.result())
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
    except asyncio.CancelledError:  # the caller gave up: so does the handler, unwaited
        task.cancel()
        _leave_running(tool, task, stubborn=False)
        raise
    if not done:
        _leave_running(tool, task)
        raise _Unstopped()
    if not task.cancelled() and task.exception() is None:
        return _delivered(task.result())  # it finished as it was being stopped
    raise asyncio.TimeoutError()


class _Carried:
    """A ``KeyboardInterrupt`` or ``SystemExit`` a handler raised in its task, carried out."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


async def _carried(awaitable: Any) -> Any:
    """``awaitable``'s value; an interpreter signal it raises comes back as a value, since one
    raised in a task leaves the event loop at once, past the clean-up of the caller's framework
    (whose worker threads may then keep the process from exiting)."""
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as exc:
        return _Carried(exc)


def _delivered(value: Any) -> Any:
    """``value``, or the signal :func:`_carried` carried, raised in the caller's task."""
    if isinstance(value, _Carried):
        raise value.exc
    return value


def _leave_running(tool: Tool, task: asyncio.Future[Any], *, stubborn: bool = True) -> None:
    """Keep ``task`` referenced until it ends; log a handler that ignored its cancellation."""
    if task.done():
        return
    for old in [t for t in _LEFT_RUNNING if t.get_loop().is_closed()]:
        _LEFT_RUNNING.discard(old)  # a closed loop never runs them again
    _LEFT_RUNNING.add(task)
    if stubborn:
        logger.warning(
            "toolmgmt: %s did not stop within %gs of being cancelled at its timeout; it is "
            "left running",
            tool.name,
            STOP_SECONDS,
        )

    def finished(task: asyncio.Future[Any]) -> None:
        _LEFT_RUNNING.discard(task)
        if stubborn:
            logger.warning("toolmgmt: %s, left running after its timeout, has ended", tool.name)

    task.add_done_callback(finished)


def _exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when that itself fails (an exception is untrusted too)."""
    try:
        return str(exc).strip() or "(no message)"
    except Exception:
        return "(its message could not be read)"


class CallClock:
    """What is left of one call's timeout, not counting time spent waiting for approval."""

    def __init__(self, timeout: float | None) -> None:
        self.deadline = None if timeout is None else time.monotonic() + timeout

    def left(self) -> float | None:
        """Seconds left (negative when past), or None without a timeout."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Within this block the clock stands still (an approver may take its time)."""
        start = time.monotonic()
        try:
            yield
        finally:
            if self.deadline is not None:
                self.deadline += time.monotonic() - start
