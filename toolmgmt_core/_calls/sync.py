"""Where sync and async code meet: the one bridge each way.

- :func:`run_sync` runs a coroutine from sync code (``call_sync``, ``summarize_result_sync``,
  the CLI's and the MCP adapter's blocking entry points, ``serve_sync`` on uvloop through its
  ``loop_factory``), even when a loop is already running;
- :func:`off_loop` runs bounded sync work (validation, result shaping) from async code on a
  thread, so the event loop keeps serving other calls; each tool's work goes to a work pool of
  its own (:mod:`toolmgmt_core._calls.threads`, the one registry of threads), so one tool's slow
  inputs never keep another tool's work waiting; and :func:`is_small` tells when a value is
  cheap enough to handle on the loop itself.

Tool handlers are not bridged here: each sync tool runs on a handler pool of its own
(:mod:`toolmgmt_core._calls.execution`), so a hung handler never holds another tool's threads.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from toolmgmt_core._calls.threads import run_work
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "is_small",
    "off_loop",
    "run_sync",
]

_T = TypeVar("_T")

_SMALL_NODES = 2_000
_SMALL_CHARS = 64_000

_SYNC_BRIDGE_POOL = Pool("sync", 16)


def run_sync(
    coroutine: Coroutine[Any, Any, _T],
    *,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> _T:
    """Run ``coroutine`` to completion from sync code, even when a loop is already running.

    Inside a running loop (a notebook, an async framework calling sync code) it runs on a
    fresh loop in a worker thread, since the running loop cannot be re-entered.

    Args:
        coroutine: what to run.
        loop_factory: makes the loop it runs on (``uvloop.new_event_loop``); default asyncio's.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(coroutine, loop_factory)
    context = contextvars.copy_context()  # the caller's context (a framework's run) goes along
    return _SYNC_BRIDGE_POOL.submit(context.run, _run, coroutine, loop_factory).result()


_SHUTDOWN_SECONDS = 1.0


def _run(
    coroutine: Coroutine[Any, Any, _T],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None,
) -> _T:
    """``asyncio.run(coroutine, loop_factory=...)`` (which Python 3.10 does not have), except
    that a task still running at the end is cancelled and given :data:`_SHUTDOWN_SECONDS`, not
    waited for until it ends: ``asyncio.run`` would wait forever for a tool handler that
    ignores its cancellation (one left running after its timeout)."""
    loop = (loop_factory or asyncio.new_event_loop)()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        try:
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.wait(tasks, timeout=_SHUTDOWN_SECONDS))
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during run_sync() shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )


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


async def off_loop(fn: Callable[[], _T], *, lane: str | None = None) -> _T:
    """``fn()`` on a worker thread (with this context), so the event loop keeps serving others.

    For bounded CPU work only (validation, result shaping). ``lane`` (a tool's name) gives the
    work pool of its own (:func:`~toolmgmt_core._calls.threads.run_work`): at most four jobs of
    one pool run at once, so a tool whose inputs are slow to check holds only its own pool while
    every other tool's work runs on. Cancelling the await drops a job that has not started (one
    that has runs to its own deadline).
    """
    context = contextvars.copy_context()
    return await run_work(lane, functools.partial(context.run, fn))
