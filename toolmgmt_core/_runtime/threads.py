"""Every thread toolmgmt starts, in one registry: named, bounded, counted and joined on close.

Two kinds, and no other way to start one:

- a :class:`Pool`: at most ``max_workers`` threads named ``toolmgmt-<name>_<n>``, started as its
  jobs need them (each sync tool's threads, the sync bridge, summarisers, the sandbox's steps,
  blocking store calls, the tokenizer's download). A job that timed out and still runs is
  *hung*: :meth:`Pool.abandon` counts it under a label (a tool's name) until it returns, and
  :func:`hung_threads` reports the counts, the figure the gateway's hung-thread gauge shows;
- :func:`start_thread`: the one long-lived thread of a component that stops it itself (the usage
  log's writer, the catalog follower, the learner, a stdio upstream's stderr relay).

And :func:`call_after`, for deadlines (a stalled database connection cut): one thread for every
timer of the process, not a ``threading.Timer`` each.

Nothing uses the event loop's default executor (``asyncio.to_thread``, ``run_in_executor(None,
...)``): ``asyncio.run`` waits for it on exit, so a hung job would turn a timeout into a hang, and
its threads would be neither named nor counted here (``tests/core/test_thread_registry.py`` scans
the core, the adapters and the gateway for any other way to start a thread).

On close (``ToolManager.close``, the gateway's shutdown) :func:`join_threads` lets every pool's
threads go once their job is done (a later job starts fresh ones, so another manager of the
process runs on) and joins them within a deadline; it names the ones still running (hung).
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import logging
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = [
    "Pool",
    "call_after",
    "hung_threads",
    "join_threads",
    "live_threads",
    "start_thread",
]

_T = TypeVar("_T")

_LOCK = threading.Lock()
_POOLS: weakref.WeakSet[Pool] = weakref.WeakSet()
_THREADS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
"""Every thread started here (pools' and dedicated ones), while it exists."""
_HUNG: dict[Future[Any], str] = {}
"""Jobs that timed out and still run, with the label they count under."""


class Pool:
    """At most ``max_workers`` named threads, started on demand, for jobs of one kind.

    Args:
        name: what its threads are named after (``toolmgmt-<name>_<n>``).
        max_workers: threads at most; more jobs queue for them.
    """

    def __init__(self, name: str, max_workers: int) -> None:
        self.name = name
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        """Every thread of the pool while it exists."""
        with _LOCK:
            _POOLS.add(self)

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        """Run ``fn(*args, **kwargs)`` on one of the pool's threads."""
        with self._lock:  # never submitted to an executor being let go
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.max_workers,
                    thread_name_prefix=f"toolmgmt-{self.name}",
                    initializer=self._started,
                )
            return self._executor.submit(fn, *args, **kwargs)

    async def run(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` on the pool, awaited from async code with the caller's
        context (what ``asyncio.to_thread`` would do, on this pool's bounded, counted threads).
        Cancelling the await drops a job that has not started."""
        context = contextvars.copy_context()
        return await asyncio.wrap_future(self.submit(context.run, fn, *args, **kwargs))

    def abandon(self, future: Future[Any], label: str) -> bool:
        """``future`` timed out: cancel it if it has not started, else count it as hung under
        ``label`` (:func:`hung_threads`) until it returns. Whether it is counted."""
        if future.cancel():
            return False
        with _LOCK:
            if future.done() or future in _HUNG:
                return False
            _HUNG[future] = label
        future.add_done_callback(_returned)
        return True

    def _started(self) -> None:
        thread = threading.current_thread()
        with self._lock:
            self._threads.add(thread)
        with _LOCK:
            _THREADS.add(thread)

    def release(self) -> list[threading.Thread]:
        """Let the pool's threads go once their jobs (queued ones included) are done; a later
        job starts fresh ones. The threads let go that still run (earlier ones too), to join."""
        with self._lock:
            executor, self._executor = self._executor, None
            threads = [t for t in list(self._threads) if t.is_alive()]
        if executor is not None:
            executor.shutdown(wait=False)
        return threads


def _returned(future: Future[Any]) -> None:
    with _LOCK:
        _HUNG.pop(future, None)


def hung_threads() -> dict[str, int]:
    """Threads held by jobs that timed out and still run, by label (a tool's name; a
    summariser's is ``"<tool> summariser"``), only labels that have some: what a health or
    metrics endpoint reports. Each is counted until its job returns."""
    with _LOCK:
        return dict(Counter(_HUNG.values()))


def start_thread(name: str, target: Callable[[], object]) -> threading.Thread:
    """Start ``target`` on a daemon thread named ``toolmgmt-<name>``, counted here; its owner
    stops it (and joins it) on close."""
    thread = threading.Thread(target=target, name=f"toolmgmt-{name}", daemon=True)
    with _LOCK:
        _THREADS.add(thread)
    thread.start()
    return thread


class _Timer:
    __slots__ = ("cancelled", "fn")

    def __init__(self, fn: Callable[[], object]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


_TIMERS: list[tuple[float, int, _Timer]] = []
_TIMERS_CHANGED = threading.Condition()
_TIMER_ORDER = itertools.count()
_TIMER_THREAD: threading.Thread | None = None
_TIMER_IDLE = 30.0
"""Seconds the timer thread waits with nothing to do before it ends (the next timer starts it)."""


def call_after(seconds: float, fn: Callable[[], object]) -> Callable[[], None]:
    """Call ``fn()`` in ``seconds`` on the timer thread, unless cancelled first; the cancel.

    ``fn`` must be quick (it delays the timers after it): shut a socket, set an event."""
    global _TIMER_THREAD
    timer = _Timer(fn)
    with _TIMERS_CHANGED:
        heapq.heappush(_TIMERS, (time.monotonic() + seconds, next(_TIMER_ORDER), timer))
        if _TIMER_THREAD is None:
            _TIMER_THREAD = start_thread("timer", _run_timers)
        _TIMERS_CHANGED.notify()
    return timer.cancel


def _run_timers() -> None:
    global _TIMER_THREAD
    while True:
        with _TIMERS_CHANGED:
            while True:
                while _TIMERS and _TIMERS[0][2].cancelled:
                    heapq.heappop(_TIMERS)
                if not _TIMERS:
                    if not _TIMERS_CHANGED.wait(_TIMER_IDLE) and not _TIMERS:
                        _TIMER_THREAD = None
                        return
                    continue
                delay = _TIMERS[0][0] - time.monotonic()
                if delay <= 0:
                    timer = heapq.heappop(_TIMERS)[2]
                    break
                _TIMERS_CHANGED.wait(delay)
        if timer.cancelled:
            continue
        try:
            timer.fn()
        except Exception:  # one timer's failure never stops the others
            logging.getLogger("toolmgmt").exception("toolmgmt: a timer failed")


def live_threads() -> list[str]:
    """The names of the threads started here that are running now, sorted."""
    with _LOCK:
        threads = list(_THREADS)
    return sorted(t.name for t in threads if t.is_alive())


def join_threads(timeout: float = 5.0) -> list[str]:
    """Let every pool's threads go once their jobs are done and join them, waiting at most
    ``timeout`` seconds in all; the names of those still running then (hung jobs), sorted.

    Dedicated threads (:func:`start_thread`) are stopped and joined by their owners."""
    with _LOCK:
        pools = list(_POOLS)
    threads = [t for pool in pools for t in pool.release()]
    deadline = time.monotonic() + timeout
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in threads if t.is_alive())
