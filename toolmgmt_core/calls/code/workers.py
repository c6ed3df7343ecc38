"""The sandbox's workers: one pool of pydantic-monty subprocesses for the process, and a
program's hold on one of them (:class:`WorkerHold`).

A program holds a worker only while it runs. When it waits on its tools for longer than
:data:`HOLD_SECONDS`, its worker's state is dumped, the worker goes back to the pool for other
programs, and the program is loaded on whichever worker is free when its tools answer (a dump
and a load cost well under a millisecond). So a program waiting on a slow server holds no
worker, and one caller's slow programs never make another's wait for one.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from typing import Any

from toolmgmt_core.compat import require_version

__all__ = [
    "HOLD_SECONDS",
    "MAX_WORKERS",
    "MIN_MONTY_VERSION",
    "WorkerHold",
    "monty",
    "require_sandbox",
]

MIN_MONTY_VERSION = "1.4"
"""The oldest pydantic-monty code mode runs on (the worker pool, snapshots, ``load_snapshot``)."""

MAX_WORKERS = 4
"""Sandbox worker processes at most (programs beyond them wait for one to be free)."""

HOLD_SECONDS = 0.01
"""How long a program waiting on its tools keeps its worker before handing it back (tools that
answer at once never cost a dump and a load)."""

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


class WorkerHold:
    """One program's hold on a worker: taken to start or load it, handed back while it waits.

    Each step runs off the event loop (a worker's answer blocks its thread).
    """

    def __init__(self, limits: dict[str, Any], hooks: dict[str, Any]) -> None:
        self.limits = limits
        self.hooks = hooks
        """``print_callback`` and ``external_lookup``: host state, given again on each load."""
        self.session: Any = None

    async def start(self, code: str) -> Any:
        """The program's first snapshot, on a worker taken from the pool."""
        await self._take()
        return await asyncio.to_thread(self.session.feed_start, code, **self.hooks)

    async def load(self, blob: bytes) -> Any:
        """The snapshot ``blob`` (from :meth:`release` or a paused program), on a worker taken
        from the pool: it announces again the step it was dumped at."""
        await self._take()
        return await asyncio.to_thread(self.session.load_snapshot, blob, **self.hooks)

    async def release(self, snap: Any) -> bytes:
        """Hand the worker back to the pool, keeping ``snap``'s state to :meth:`load` later."""
        blob: bytes = await asyncio.to_thread(snap.dump)
        await self.close()
        return blob

    async def close(self) -> None:
        """Hand the worker back (nothing kept)."""
        session, self.session = self.session, None
        if session is not None:
            await asyncio.to_thread(session.__exit__, None, None, None)

    async def _take(self) -> None:
        await self.close()
        session = _pool().checkout(
            script_name="program.py", limits=self.limits, os_policy={"sleep": "zero"}
        )
        await asyncio.to_thread(session.__enter__)
        self.session = session
