"""The threads tool calls run on: pools of the thread registry, within one limit for the process.

Each tool has small pools of threads of its own, of two kinds:

- a **handler pool** runs a sync tool's handler, at most ``Tool.max_concurrency`` calls at once
  (default :data:`DEFAULT_TOOL_CONCURRENCY`) (:func:`run_on_lane`, from
  :mod:`toolmgmt_core._calls.execution`);
- a **work pool** runs a tool's bounded sync work off the event loop (validation, result
  shaping), at most :data:`WORK_LANE_THREADS` jobs at once, more queueing for them
  (:func:`run_work`, behind :func:`~toolmgmt_core._calls.sync.off_loop`); work given no tool
  shares one pool.

**The limit**: every pool of both kinds together holds at most :data:`MAX_SYNC_THREADS` (64)
threads with a call or job on them (running, or left running by a call that timed out). A pool
holding none always gets one, so every tool's handler and work runs on; past the limit a pool
that holds threads waits for one of its own to finish, never for another tool's. A tool whose
calls hang holds only its own threads, and once every one of them is held by a call that timed
out (or its hung calls fill the process's share) it answers ``tool_unavailable`` at once, while
every other tool runs on. Each is a :class:`~toolmgmt_core._runtime.threads.Pool` of the
one registry of threads, so :func:`~toolmgmt_core._runtime.threads.hung_threads` counts
those left running, by tool, and closing joins them. At most :data:`MAX_LANES` idle pools (256,
both kinds) are kept, least recently used let go first; a pool with a call in flight or hung is
kept. (:func:`~toolmgmt_core._calls.sync.run_sync`'s bridge threads run coroutines for sync
callers, not tool calls, and are not counted against :data:`MAX_SYNC_THREADS`.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, TypeVar

from toolmgmt_core._model.errors import ToolUnavailableError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "DEFAULT_TOOL_CONCURRENCY",
    "MAX_LANES",
    "MAX_SYNC_THREADS",
    "WORK_LANE_THREADS",
    "run_on_lane",
    "run_work",
    "threads_in_use",
]

_T = TypeVar("_T")

DEFAULT_TOOL_CONCURRENCY = 8
"""Calls of one sync tool that run at once when the tool sets no ``max_concurrency``."""

WORK_LANE_THREADS = 4
"""Jobs of one tool's work pool that run at once."""

MAX_LANES = 256
"""Idle pools kept, handler and work pools together (a pool in use is always kept)."""

MAX_SYNC_THREADS = 64
"""Threads that tool calls may hold in this process, every pool of both kinds together: sync
handlers (running, or left running by calls that timed out) and work off the loop. A pool
holding no thread always gets one, so every tool runs on; past this count a pool that holds
threads waits for one of its own to finish (or a tool answers ``tool_unavailable`` at once while
its calls that timed out fill the process's share). Set it before the first call to change it."""

logger = logging.getLogger("toolmgmt")


class _Lane:
    """The threads of one tool, of one kind: at most ``limit`` of its calls hold one at once.

    A call that times out keeps its thread (Python cannot stop a thread) and counts as hung
    until it returns; when every thread is held by a hung call the tool is reported
    unavailable at once rather than queueing calls that would only time out too. Threads are
    also counted across pools (:data:`MAX_SYNC_THREADS`, see :func:`_admit`).
    """

    def __init__(self, name: str, limit: int, prefix: str, *, queues: bool) -> None:
        self.name = name
        self.limit = limit
        self.queues = queues
        """Whether calls past ``limit`` queue for its threads (work, bounded) rather than wait
        to be admitted (handlers, which may hang: a call that never started must say so)."""
        self.pool = Pool(prefix, limit)
        self.active = 0
        """Calls admitted and not finished: the first ``limit`` of them hold a thread each."""
        self.hung: set[concurrent.futures.Future[Any]] = set()
        """Calls that timed out and still run."""
        self.waiters: deque[asyncio.Future[None]] = deque()
        """Work jobs waiting for a thread of this pool, first come first woken: one each time
        one of its calls finishes."""

    def submit(self, call: Callable[[], _T]) -> concurrent.futures.Future[_T]:
        """Run an admitted call (see :func:`_admit`) on one of the pool's threads."""
        future = self.pool.submit(call)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        global _THREADS, _HUNG
        with _THREADS_LOCK:
            if self.active <= self.limit:  # else a queued call takes over the thread
                _THREADS -= 1
            self.active -= 1
            if future in self.hung:
                self.hung.discard(future)
                _HUNG -= 1
            waiting = bool(self.waiters)
        if waiting:
            _wake_next(self)

    def abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """``future`` timed out: cancel it if it has not started, else count it as hung."""
        global _HUNG
        if not self.pool.abandon(future, self.name):  # not started (cancelled), or returned
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


_THREADS = 0  # threads held by calls, every pool together
_HUNG = 0  # of them, held by calls that timed out
_THREADS_LOCK = threading.Lock()
# The registry: (kind, tool name, id of the handler) -> (the handler, its pool). The handler is
# kept in the entry so its id stays its own; work pools key on the name alone (id 0).
_LANES: OrderedDict[tuple[str, str, int], tuple[Any, _Lane]] = OrderedDict()
_LANES_LOCK = threading.Lock()
_ADMIT_POLL = 0.01  # seconds between tries of a call waiting for a thread


def threads_in_use() -> int:
    """Threads held by calls now, every pool together (what :data:`MAX_SYNC_THREADS` bounds)."""
    with _THREADS_LOCK:
        return _THREADS


def _lane(kind: str, name: str, handler: Any, limit: int, *, queues: bool) -> _Lane:
    """The pool of ``kind`` for ``name`` (and ``handler``), made on first use; at most
    :data:`MAX_LANES` idle ones are kept, least recently used let go first."""
    key = (kind, name, 0 if handler is None else id(handler))
    with _LANES_LOCK:
        entry = _LANES.get(key)
        if entry is not None and entry[0] is handler:
            _LANES.move_to_end(key)
            return entry[1]
        prefix = f"{kind}-{name[:24]}" if name else kind
        lane = _Lane(name, limit, prefix, queues=queues)
        _LANES[key] = (handler, lane)
        if len(_LANES) > MAX_LANES:
            for old_key, (_, old) in list(_LANES.items())[: len(_LANES) - MAX_LANES]:
                if old.active == 0:  # a pool with calls in flight (or hung) stays
                    del _LANES[old_key]
                    old.pool.release()
        return lane


def _wake_next(lane: _Lane) -> None:
    """A thread of ``lane`` came free: wake the job that has waited longest (from any thread)."""
    while True:
        with _THREADS_LOCK:
            if not lane.waiters:
                return
            waiter = lane.waiters.popleft()
        try:
            waiter.get_loop().call_soon_threadsafe(_wake, lane, waiter)
            return
        except RuntimeError:  # its loop has closed: the turn goes to the next
            continue


def _wake(lane: _Lane, waiter: asyncio.Future[None]) -> None:
    if waiter.done():  # cancelled meanwhile: the turn goes to the next
        _wake_next(lane)
    else:
        waiter.set_result(None)


def _admit(lane: _Lane, waiter: asyncio.Future[None] | None = None) -> bool:
    """Give the call a thread of ``lane`` now if it may have one; whether it got one. If not,
    ``waiter`` (when given) is woken the next time one of the pool's calls finishes.

    Raises:
        ToolUnavailableError: the tool's calls that timed out hold all its threads, or (with
            this process at :data:`MAX_SYNC_THREADS`) as many as the process allows.
    """
    global _THREADS
    with _THREADS_LOCK:
        if len(lane.hung) >= lane.limit or (lane.hung and _HUNG >= MAX_SYNC_THREADS):
            held, everyone = len(lane.hung), _HUNG
        elif (lane.active >= lane.limit and not lane.queues) or (
            0 < lane.active < lane.limit and _THREADS >= MAX_SYNC_THREADS
        ):
            if waiter is not None:  # registered under the lock: no finish goes unseen
                lane.waiters.append(waiter)
            return False  # wait for a thread of its own to finish
        else:
            if lane.active < lane.limit:  # it takes a thread (else it queues for one)
                _THREADS += 1
            lane.active += 1
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


async def run_on_lane(
    tool: Tool, handler: Callable[..., Any], call: Callable[[], Any], timeout: float | None
) -> Any:
    """``call()`` (``tool``'s sync ``handler``) on the tool's handler pool, within ``timeout``.

    Raises:
        ToolUnavailableError: the tool's threads are held by calls that timed out, or none came
            free within ``timeout`` (the call never started).
        TimeoutError: the call ran past ``timeout``; it keeps its thread, counted as hung.
    """
    limit = tool.max_concurrency or DEFAULT_TOOL_CONCURRENCY
    lane = _lane("tool", tool.name, handler, limit, queues=False)
    deadline = None if timeout is None else time.monotonic() + timeout
    while not _admit(lane):  # the tool's or the process's threads are all busy: wait a little
        if deadline is not None and time.monotonic() >= deadline:
            raise ToolUnavailableError(  # it never started: nothing of it may still complete
                f"Tool {tool.name!r} did not start within its {timeout:g}s: its threads were "
                f"all busy ({lane.active} of at most {lane.limit} in use; this process's tool "
                f"calls hold {_THREADS} threads of at most {MAX_SYNC_THREADS}). Try it again "
                "shortly, or use another tool.",
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


async def run_work(name: str | None, job: Callable[[], _T]) -> _T:
    """``job()`` on the work pool of tool ``name`` (None: the shared one), once it has a thread.

    The work is bounded (deadlines, regex time limits), so a job never hangs and waiting for a
    thread of its own pool ends: past the pool's threads a job queues for them; one that would
    take a thread past :data:`MAX_SYNC_THREADS` waits until one of the pool's jobs finishes.
    Cancelling the await drops a job that has not started (one that has runs to its own
    deadline).
    """
    lane = _lane("work", name or "", None, WORK_LANE_THREADS, queues=True)
    if not _admit(lane):  # the pool's or the process's threads are all busy
        loop = asyncio.get_running_loop()
        while True:
            waiter = loop.create_future()
            if _admit(lane, waiter):
                break
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # woken, then cancelled: pass it on
                    _wake_next(lane)
                raise
    return await asyncio.wrap_future(lane.submit(job))
