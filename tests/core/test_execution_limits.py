"""Per-tool thread lanes within one limit, validation off the event loop, and the timeout covering
a whole call."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolmgmt_core import Discovery, Tool, ToolCatalog, ToolManager
from toolmgmt_core._calls import threads
from toolmgmt_core._calls.sync import is_small, off_loop
from toolmgmt_core._calls.threads import (
    DEFAULT_TOOL_CONCURRENCY,
    MAX_SYNC_THREADS,
    WORK_LANE_THREADS,
    threads_in_use,
)
from toolmgmt_core._calls.validation import check_arguments
from toolmgmt_core._runtime.threads import hung_threads


def _session(*tools: Tool, **options: Any) -> Any:
    discovery = Discovery(call_unloaded="load")
    return ToolManager(ToolCatalog(list(tools)), discovery=discovery, **options).session()


def _peak_counted() -> tuple[Callable[[], str], list[int]]:
    """A job taking 50 ms, and the most of its runs that overlapped (filled in as they run)."""
    running, peak = [0], [0]
    lock = threading.Lock()

    def work() -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return "done"

    return work, peak


def test_a_tool_runs_at_most_max_concurrency_calls_at_once() -> None:
    work, peak = _peak_counted()
    session = _session(Tool("work", handler=work, max_concurrency=2, timeout=10))

    async def burst() -> list[Any]:
        return await asyncio.gather(*(session.call("work", {}) for _ in range(6)))

    results = asyncio.run(burst())
    assert [r.value for r in results] == ["done"] * 6
    assert peak[0] == 2


def test_queued_calls_that_time_out_are_not_counted_as_hung() -> None:
    release = threading.Event()
    hang = Tool("hang", handler=lambda: release.wait(30), max_concurrency=2, timeout=0.3)
    session = _session(hang)

    async def scenario() -> tuple[list[str], str]:
        first = await asyncio.gather(*(session.call("hang", {}) for _ in range(5)))
        again = await session.call("hang", {})
        return [r.error.code for r in first], again.error.code

    try:
        codes, again = asyncio.run(scenario())
    finally:
        release.set()
    # two threads hang; the queued three never started: tool_unavailable, not a timeout that
    # "may still complete"
    assert sorted(codes) == ["timeout"] * 2 + ["tool_unavailable"] * 3
    assert again == "tool_unavailable"  # no slot is left
    time.sleep(0.2)  # the released handlers return; their slots come back
    assert not session.call_sync("hang", {}).is_error


def _settled(within: float = 10.0) -> None:
    """Wait until no sync call of an earlier test holds a thread (they were released)."""
    deadline = time.monotonic() + within
    while hung_threads() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_calls_that_hang_across_many_tools_leave_a_bounded_number_of_threads() -> None:
    # Issue 25: 320 timeouts over 40 sync tools left 327 threads (8 per tool, no bound in all).
    _settled()
    release = threading.Event()
    tools = [Tool(f"hang_{i}", handler=lambda: release.wait(30), timeout=0.3) for i in range(40)]
    session = _session(*tools, Tool("healthy", handler=lambda: "fine", timeout=5))
    before = set(threading.enumerate())

    async def scenario() -> tuple[list[Any], Any]:
        results: list[Any] = []
        for _ in range(8):  # every tool called eight times, forty calls at once
            results += await asyncio.gather(*(session.call(t.name, {}) for t in tools))
        return results, await session.call("healthy", {})

    try:
        results, healthy = asyncio.run(scenario())
        started = [t.name for t in threading.enumerate() if t not in before]
        hung, in_use = hung_threads(), threads_in_use()
    finally:
        release.set()
    assert len(results) == 320
    assert {r.error.code for r in results} == {"timeout", "tool_unavailable"}
    # One limit for every lane: the calls hold exactly the process's share, all of it the hung
    # handlers' (the healthy call and any work are done and gave theirs back).
    assert in_use == sum(hung.values()) == MAX_SYNC_THREADS, (in_use, hung)
    assert set(hung) <= {t.name for t in tools}
    # Every thread the calls started is a lane's: the handlers' (within the limit, and one of the
    # healthy tool's), and the work lanes' (a check that a loaded machine kept past
    # ON_LOOP_SECONDS re-runs on its tool's work lane); nothing else.
    handlers = [n for n in started if n.startswith("toolmgmt-tool-")]
    work = [n for n in started if n.startswith("toolmgmt-work-")]
    assert sorted(handlers + work) == sorted(started), started
    assert len(handlers) <= MAX_SYNC_THREADS + 1, len(handlers)
    assert len(work) <= WORK_LANE_THREADS * len(tools), len(work)
    assert healthy.value == "fine"  # a tool holding no thread always gets one
    refused = [r for r in results if r.error.code == "tool_unavailable"]
    assert "this process holds 64 such threads (at most 64)" in refused[-1].content
    _settled()
    assert not hung_threads()  # counted until their handlers return, then given back


def test_work_off_the_loop_counts_against_the_same_limit_as_handlers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 33: handler and work threads were two registries with two bounds; now one limit
    # holds both, and a lane holding no thread still always gets one.
    _settled()
    monkeypatch.setattr(threads, "MAX_SYNC_THREADS", 2)
    release = threading.Event()
    session = _session(Tool("stuck", handler=lambda: release.wait(30), timeout=0.2))
    job, peak = _peak_counted()

    async def scenario() -> tuple[list[str], int, list[str]]:
        calls = await asyncio.gather(*(session.call("stuck", {}) for _ in range(2)))
        held = threads_in_use()
        done = await asyncio.gather(*(off_loop(job, lane="busy") for _ in range(3)))
        return [r.error.code for r in calls], held, done

    try:
        codes, held, done = asyncio.run(scenario())
    finally:
        release.set()
    assert codes == ["timeout", "timeout"] and held == 2  # the hung calls fill the share
    assert done == ["done"] * 3 and peak[0] == 1  # the work still runs, one job at a time
    _settled()
    monkeypatch.undo()

    together = threading.Barrier(3, timeout=10)  # below the limit, a lane's jobs run at once

    async def burst() -> list[int]:
        return await asyncio.gather(*(off_loop(together.wait, lane="busy") for _ in range(3)))

    assert sorted(asyncio.run(burst())) == [0, 1, 2]


def test_one_tools_work_never_waits_on_another_tools_work() -> None:
    _settled()
    release = threading.Event()
    before = threads_in_use()

    async def scenario() -> tuple[str, int]:
        slow = [
            asyncio.ensure_future(off_loop(lambda: release.wait(10), lane="slow"))
            for _ in range(WORK_LANE_THREADS + 2)
        ]
        try:
            quick = await asyncio.wait_for(off_loop(lambda: "quick", lane="quick"), 5)
            return quick, threads_in_use() - before
        finally:
            release.set()
            await asyncio.gather(*slow)

    assert asyncio.run(scenario()) == ("quick", WORK_LANE_THREADS)  # two slow jobs queue
    assert threads_in_use() == before  # every thread given back, the queued jobs' too


def test_default_concurrency_and_max_concurrency_is_checked() -> None:
    from toolmgmt_core import InvalidToolError

    assert DEFAULT_TOOL_CONCURRENCY == 8
    with pytest.raises(InvalidToolError, match="max_concurrency must be a positive whole number"):
        Tool("t", max_concurrency=0)


def test_is_small_stops_measuring_early() -> None:
    assert is_small({"a": [1, 2, 3], "b": "x" * 100})
    assert not is_small(["x"] * 10_000)
    assert not is_small("x" * 100_000)
    assert not is_small({"obj": object()})  # converting an object could cost anything


def test_check_arguments_leaves_the_loop_only_when_it_could_take_a_while() -> None:
    plain = Tool("plain", parameters={"type": "object", "properties": {"a": {"type": "string"}}})
    regexy = Tool(
        "regexy",
        parameters={"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},
    )
    threads: dict[str, str] = {}
    import toolmgmt_core._calls.validation as validation

    real = validation.validate_arguments

    def spy(tool: Tool, *args: Any, **kwargs: Any) -> Any:
        threads[tool.name] = threading.current_thread().name
        return real(tool, *args, **kwargs)

    async def scenario() -> None:
        validation.validate_arguments = spy  # type: ignore[assignment]
        try:
            await check_arguments(plain, {"a": "x"})
            await check_arguments(regexy, {"a": "x"})
            await check_arguments(plain, {"a": "x" * 100_000})
        finally:
            validation.validate_arguments = real  # type: ignore[assignment]

    asyncio.run(scenario())
    assert threads["plain"].startswith("toolmgmt-work")  # the large one ran last
    assert threads["regexy"].startswith("toolmgmt-work")


def test_the_timeout_covers_validation_not_approval() -> None:
    slow_approver_ran: list[bool] = []

    def approve(request: Any) -> bool:
        time.sleep(0.6)  # longer than the tool's whole timeout
        slow_approver_ran.append(True)
        return True

    tool = Tool("act", handler=lambda: "acted", annotations={"destructive": True}, timeout=0.5)
    session = _session(tool, approval=approve)
    result = session.call_sync("act", {})
    assert slow_approver_ran and not result.is_error, result.content


def test_a_result_that_cannot_be_shown_is_done_and_accounted() -> None:
    deep: Any = 0
    for _ in range(2_000):
        deep = [deep]
    session = _session(Tool("charge", handler=lambda: deep))
    result = session.call_sync("charge", {}, call_id="c1")
    assert not result.is_error and result.value["status"] == "done"
    assert result.note == "ResultNotShown: RecursionError"
    assert [r.call_id for r in session.result_budget.records()] == ["c1"]
