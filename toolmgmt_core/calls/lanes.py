"""The threads sync handlers run on: a lane of its own per tool, within one bound for the process.

Each sync tool runs on threads of its own, at most ``Tool.max_concurrency`` at once (default
:data:`DEFAULT_TOOL_CONCURRENCY`), and every sync tool together on at most
:data:`MAX_SYNC_THREADS`: a tool whose calls hang holds only its own threads, and once every one
of them is held by a call that timed out it answers ``tool_unavailable`` at once, while every
other tool runs on. :func:`hung_threads` counts the threads left running by tool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from toolmgmt_core.model.errors import ToolUnavailableError
from toolmgmt_core.model.tool import Tool

__all__ = [
    "DEFAULT_TOOL_CONCURRENCY",
    "MAX_SYNC_THREADS",
    "hung_threads",
    "run_on_lane",
]

DEFAULT_TOOL_CONCURRENCY = 8
"""Calls of one sync tool that run at once when the tool sets no ``max_concurrency``."""

_MAX_LANES = 256

logger = logging.getLogger("toolmgmt")


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


async def run_on_lane(
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
