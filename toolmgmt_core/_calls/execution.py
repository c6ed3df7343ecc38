"""Running one tool call safely: handlers, timeouts, results.

Everything a handler can do badly ends here as a :class:`ToolCallError` (never an escaping
exception); the arguments were checked before (:mod:`toolmgmt_core._calls.validation`):

- a handler that raises, or returns an MCP-style ``{"isError": true, ...}`` result, becomes a
  :class:`ToolExecutionError` (``kind="tool"``); a handler that raises a :class:`ToolCallError`
  itself (an upstream that is down) passes through unchanged;
- a handler that runs longer than its timeout becomes a :class:`ToolTimeoutError`, at the
  timeout. Sync handlers run in a worker thread so a slow one never blocks the event loop;
  Python cannot kill a thread, so a timed-out sync handler finishes in the background and its
  result is dropped. An async handler is cancelled and given :data:`STOP_SECONDS` to stop; one
  that does not (it swallows the cancellation) is left running, never waited for. Either way
  the model is told the call may still complete, so a side effect is not repeated blindly.

Sync handlers run on their tool's own pool of threads (:mod:`toolmgmt_core._calls.threads`:
bounded per tool and for the process, the hung ones counted).

A handler that raises :class:`ToolAnswerLostError` (its request or answer was lost: the call may
or may not have run) is run once more, within what is left of its timeout, when the tool is
annotated read-only, or idempotent and not destructive; never otherwise. Every integration gets that
rule here, once, whatever raised it (an MCP upstream, a LangChain or a PydanticAI tool).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._calls.context import CONTEXT_PARAMETER, NO_CONTEXT, CallContext, takes_context
from toolmgmt_core._calls.threads import run_on_lane
from toolmgmt_core._model.content import ContentResult
from toolmgmt_core._model.errors import (
    ToolAnswerLostError,
    ToolCallError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
    exception_message,
)
from toolmgmt_core._model.redaction import redact_secrets
from toolmgmt_core._model.tool import Tool, ToolAnnotations
from toolmgmt_core._runtime.control import CallPaused, reraise_control_flow

__all__ = [
    "OUTCOMES",
    "STOP_SECONDS",
    "CallClock",
    "ToolResult",
    "dumps_compact",
    "repeatable",
    "run_handler",
]

STOP_SECONDS = 1.0
"""Seconds an async handler cancelled at its timeout is given to stop before it is left."""

OUTCOMES: tuple[str, ...] = ("success", "retry", "denied", "failed", "paused")
"""What a call can come to (:attr:`ToolResult.outcome`); ``paused`` only where the integration hands
down what may pause a call (the MCP gateway's relay and approver)."""

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
    truncation: str | None = None
    """How ``content`` was cut (``smart``, ``head``, ``tail`` or ``summary``), None when it
    was not."""
    media: list[Mapping[str, Any]] = field(default_factory=list)
    """Blocks a :class:`~toolmgmt_core.ContentResult` carried that are not text (images,
    audio, resources), for an integration that passes them on beside :attr:`content`."""
    paused: CallPaused | None = None
    """Why the call paused, when it did (:class:`~toolmgmt_core._runtime.control.CallPaused`:
    its caller must answer a question first; the integration asks it in its protocol's form). A
    paused call has no result: nothing was shaped, counted or recorded."""

    @property
    def outcome(self) -> str:
        """``"success"``, or the error's outcome: ``"retry"`` (the model can fix its call),
        ``"denied"`` (refused) or ``"failed"``; ``"paused"`` (:attr:`paused`) when the caller
        must answer first. Each integration maps it to its framework's form."""
        if not self.is_error:
            return "success" if self.paused is None else "paused"
        return self.error.outcome if self.error is not None else "failed"

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


async def run_handler(
    tool: Tool,
    arguments: Mapping[str, Any],
    timeout: float | None,
    *,
    stated: float | None = None,
    context: CallContext = NO_CONTEXT,
) -> Any:
    """Run ``tool``'s handler with ``arguments`` as keyword arguments; return its value.
    A handler that declares the ``toolmgmt_context`` keyword also gets ``context``. A handler
    whose answer was lost (:class:`ToolAnswerLostError`) is run once more when the tool is
    safe to repeat (:func:`repeatable`), within what is left of ``timeout``.

    Args:
        tool: the tool.
        arguments: validated arguments.
        timeout: seconds left for the handler (None: no limit).
        stated: the timeout to name in the error message (default ``timeout``).
        context: the call's context, for a handler that asks for it.

    Raises:
        ToolUnavailableError: the tool has no handler, or its calls keep hanging.
        ToolAnswerLostError: the answer was lost, and the tool is not safe to repeat or the
            answer of the second run was lost too.
        ToolTimeoutError: it took longer than ``timeout`` seconds.
        ToolExecutionError: it raised, or returned ``{"isError": true, ...}``.
        ToolCallError: whatever the handler raised of that family, its message's secrets
            replaced (the MCP adapter's errors quote the upstream's).
    """
    started = time.monotonic()
    try:
        return await _run_once(tool, arguments, timeout, stated, context)
    except ToolAnswerLostError as lost:
        left = None if timeout is None else timeout - (time.monotonic() - started)
        if not repeatable(tool.annotations) or (left is not None and left <= 0):
            raise
        logger.info(
            "toolmgmt: resending %r (read-only or idempotent) after: %s",
            tool.name,
            lost.message,
            extra={"client": context.client},  # a shared gateway's log names the caller
        )
    stated = stated if stated is not None else timeout  # the error names the whole timeout
    return await _run_once(tool, arguments, left, stated, context)


def repeatable(annotations: ToolAnnotations) -> bool:
    """Whether a call of a tool with ``annotations`` may be run again when it is unknown
    whether it ran: it is read-only, or idempotent and annotated not destructive. Unknown hints
    count as no (MCP's defaults: a tool that is not read-only may destroy), and a destructive
    tool is never repeated (its one run may have been approved once)."""
    return annotations.read_only is True or (
        annotations.idempotent is True and annotations.destructive is False
    )


async def _run_once(
    tool: Tool,
    arguments: Mapping[str, Any],
    timeout: float | None,
    stated: float | None,
    context: CallContext,
) -> Any:
    """One run of ``tool``'s handler (:func:`run_handler` without the resend)."""
    handler = tool.handler
    if handler is None:
        raise ToolUnavailableError(
            f"Tool {tool.name!r} has no handler here, so it cannot be run; use another tool.",
            tool_name=tool.name,
        )
    limit = stated if stated is not None else timeout
    if takes_context(handler):
        arguments = {**arguments, CONTEXT_PARAMETER: context}
    try:
        if _is_async_callable(handler):
            value = await _within(tool, handler(**arguments), timeout)
        else:
            variables = contextvars.copy_context()  # the declared signals, in the thread too
            call = functools.partial(variables.run, handler, **arguments)
            try:
                value = await run_on_lane(tool, handler, call, timeout)
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
    except ToolCallError as exc:
        _redact(exc)  # it may quote an upstream's own error text
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        reraise_control_flow(exc)
        message = exception_message(exc) or "(no message)"
        raise ToolExecutionError(
            f"Tool {tool.name!r} failed: {type(exc).__name__}: {message}",
            tool_name=tool.name,
        ) from exc
    if isinstance(value, ContentResult):
        if value.is_error:
            raise ToolExecutionError(
                f"Tool {tool.name!r} reported an error: {redact_secrets(value.error_text())}",
                tool_name=tool.name,
            )
    elif _reported_error(value):
        raise ToolExecutionError(
            f"Tool {tool.name!r} reported an error: {redact_secrets(_error_text(value))}",
            tool_name=tool.name,
        )
    return value


def _redact(error: ToolCallError) -> None:
    """Replace the secrets in the message of ``error``, raised by a handler (an adapter's error
    may quote what an upstream answered: :func:`redact_secrets`)."""
    message = redact_secrets(error.message)
    if message != error.message:
        error.message = message
        error.args = (message, *error.args[1:])


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
