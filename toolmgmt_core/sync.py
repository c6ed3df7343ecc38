"""Where sync and async code meet: the one bridge each way.

- :func:`run_sync` runs a coroutine from sync code (``call_sync``, ``summarize_result_sync``,
  the CLI's and the MCP adapter's blocking entry points, ``serve_sync`` on uvloop through its
  ``loop_factory``), even when a loop is already running;
- :func:`off_loop` runs bounded sync work (validation, result shaping) from async code on a
  small shared pool, so the event loop keeps serving other calls, and :func:`is_small` tells
  when a value is cheap enough to handle on the loop itself.

Tool handlers are not bridged here: each sync tool runs on threads of its own
(:mod:`toolmgmt_core.execution`), so a hung handler never holds these pools.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

__all__ = [
    "is_small",
    "off_loop",
    "run_sync",
]

_T = TypeVar("_T")

_SMALL_NODES = 2_000
_SMALL_CHARS = 64_000

# Never the loop's default executor: ``asyncio.run`` waits for its default executor on exit.
# The work here is bounded (deadlines, regex time limits), so this pool never stays blocked.
_WORK_POOL = concurrent.futures.ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="toolmgmt-work"
)
_SYNC_BRIDGE_POOL = concurrent.futures.ThreadPoolExecutor(
    max_workers=16, thread_name_prefix="toolmgmt-sync"
)


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


def _run(
    coroutine: Coroutine[Any, Any, _T],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None,
) -> _T:
    """``asyncio.run(coroutine, loop_factory=...)``, which Python 3.10 spells by hand."""
    if loop_factory is None:
        return asyncio.run(coroutine)
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(coroutine)
    loop = loop_factory()  # Python 3.10: asyncio.run without loop_factory, by hand
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()


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
