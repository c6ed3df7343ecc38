"""The sandbox's workers: one pool of pydantic-monty subprocesses for the process, and a
program's hold on one of them (:class:`WorkerHold`).

A program holds a worker only while it runs. When it waits on its tools for longer than
:data:`HOLD_SECONDS`, its worker's state is dumped, the worker goes back to the pool for other
programs, and the program is loaded on whichever worker is free when its tools answer (a dump
and a load cost well under a millisecond). So a program waiting on a slow server holds no
worker, and one caller's slow programs never make another's wait for one. And one caller (the
gateway's client, else the conversation) holds at most :data:`CLIENT_WORKERS` workers at once:
its programs that compute for long leave a worker to everyone else.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, TypeVar

from toolmgmt_core._compat import require_version
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "CLIENT_WORKERS",
    "HOLD_SECONDS",
    "MAX_WORKERS",
    "MIN_MONTY_VERSION",
    "WorkerHold",
    "monty",
    "require_sandbox",
    "step",
]

_T = TypeVar("_T")

MIN_MONTY_VERSION = "1.4"
"""The oldest pydantic-monty code mode runs on (the worker pool, snapshots, ``load_snapshot``)."""

MAX_WORKERS = 4
"""Sandbox worker processes at most (programs beyond them wait for one to be free)."""

HOLD_SECONDS = 0.01
"""How long a program waiting on its tools keeps its worker before handing it back (tools that
answer at once never cost a dump and a load)."""

CLIENT_WORKERS = MAX_WORKERS - 1
"""Workers one caller's programs hold at once (others wait for one of its own to be free)."""

_STEPS = Pool("sandbox", 2 * MAX_WORKERS)
"""Steps of programs holding a worker (at most :data:`MAX_WORKERS` of them): each waits for its
worker's answer. Apart from :data:`_CHECKOUTS`, so programs waiting for a worker never hold the
threads the programs holding one need to hand it back."""
_CHECKOUTS = Pool("sandbox-checkout", 4 * MAX_WORKERS)
"""Programs waiting for a worker (each at most the pool's ``checkout_timeout``); more queue."""

_CHECKED = False
_POOL: Any = None
_POOL_LOCK = threading.Lock()


def require_sandbox() -> None:
    """Check that pydantic-monty can be imported (code mode checks it when it is chosen).

    Raises:
        ImportError: it is not installed; the message names the extra.
    """
    monty()


def monty() -> Any:
    """The pydantic-monty module, imported and its version checked on first use."""
    try:
        import pydantic_monty
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Code mode runs programs in the pydantic-monty sandbox, which is not installed: "
            'pip install "toolmgmt[code]"'
        ) from exc
    global _CHECKED
    if not _CHECKED:
        # The bindings' distribution: pydantic-monty itself is a metapackage over it.
        require_version("pydantic-monty-client", MIN_MONTY_VERSION, "code")
        _CHECKED = True
    return pydantic_monty


def _pool() -> Any:
    """The process's worker pool, started on first use and closed at exit."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            pool = monty().Monty(
                min_processes=1,
                max_processes=MAX_WORKERS,
                checkout_timeout=30.0,
                request_timeout=60.0,  # a backstop: the limits stop a program long before
                max_checkouts_per_worker=500,
            )
            pool.__enter__()
            atexit.register(pool.__exit__, None, None, None)
            _POOL = pool
        return _POOL


class _Shares:
    """The workers each caller holds, and its programs waiting for one (first come, first
    woken), across threads and event loops."""

    def __init__(self, share: int) -> None:
        self.share = share
        self.held: Counter[str] = Counter()
        self.waiting: dict[str, deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self.lock = threading.Lock()

    async def take(self, client: str) -> None:
        while True:
            with self.lock:
                if self.held[client] < self.share:
                    self.held[client] += 1
                    return
                loop = asyncio.get_running_loop()
                woken: asyncio.Future[None] = loop.create_future()
                self.waiting.setdefault(client, deque()).append((loop, woken))
            try:
                await woken
            except asyncio.CancelledError:
                with self.lock:
                    queue = self.waiting.get(client)
                    if queue is not None and (loop, woken) in queue:
                        queue.remove((loop, woken))
                        woken = None  # type: ignore[assignment]
                if woken is not None:  # woken as it was cancelled: wake the next one instead
                    self._wake(client)
                raise

    def give(self, client: str) -> None:
        with self.lock:
            self.held[client] -= 1
            if self.held[client] <= 0:
                del self.held[client]
        self._wake(client)

    def _wake(self, client: str) -> None:
        with self.lock:
            queue = self.waiting.get(client)
            if not queue:
                return
            loop, woken = queue.popleft()
            if not queue:
                del self.waiting[client]
        loop.call_soon_threadsafe(_set, woken)


async def step(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)``, a step of a program on the worker it holds (a snapshot's resume or dump),
    on the sandbox's threads: it blocks until the worker answers."""
    return await _STEPS.run(fn, *args)


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_SHARES = _Shares(CLIENT_WORKERS)


class WorkerHold:
    """One program's hold on a worker: taken to start or load it, handed back while it waits.

    Each step runs off the event loop (a worker's answer blocks its thread).
    """

    def __init__(
        self, limits: dict[str, Any], hooks: dict[str, Any], client: str | None = None
    ) -> None:
        self.limits = limits
        self.hooks = hooks
        """``print_callback`` and ``external_lookup``: host state, given again on each load."""
        self.client = client
        """Whose program it is (None: nobody's share is counted)."""
        self.session: Any = None

    async def start(self, code: str) -> Any:
        """The program's first snapshot, on a worker taken from the pool."""
        await self._take()
        return await _STEPS.run(self.session.feed_start, code, **self.hooks)

    async def load(self, blob: bytes) -> Any:
        """The snapshot ``blob`` (from :meth:`release` or a paused program), on a worker taken
        from the pool: it announces again the step it was dumped at."""
        await self._take()
        return await _STEPS.run(self.session.load_snapshot, blob, **self.hooks)

    async def release(self, snap: Any) -> bytes:
        """Hand the worker back to the pool, keeping ``snap``'s state to :meth:`load` later."""
        blob: bytes = await _STEPS.run(snap.dump)
        await self.close()
        return blob

    async def close(self) -> None:
        """Hand the worker back (nothing kept)."""
        session, self.session = self.session, None
        if session is None:
            return
        try:
            await _STEPS.run(session.__exit__, None, None, None)
        finally:
            if self.client is not None:
                _SHARES.give(self.client)

    async def _take(self) -> None:
        await self.close()
        if self.client is not None:
            await _SHARES.take(self.client)
        try:
            session = _pool().checkout(
                script_name="program.py", limits=self.limits, os_policy={"sleep": "zero"}
            )
            await _CHECKOUTS.run(session.__enter__)
        except BaseException:
            if self.client is not None:
                _SHARES.give(self.client)
            raise
        self.session = session
