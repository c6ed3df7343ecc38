"""Programs a model writes: the calls a program gathers run at once, a program waiting on its
tools holds no sandbox worker, and what it prints last always arrives."""

from __future__ import annotations

import asyncio
import threading

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core.calls.code import CodeLimits  # noqa: E402
from toolmgmt_core.calls.code.workers import MAX_WORKERS  # noqa: E402
from toolmgmt_core.session.modes import Code  # noqa: E402

GATHER_FOUR = (
    "import asyncio\n"
    "got = await asyncio.gather(*[{tool}(n=i) for i in range(4)])\n"
    "print(sorted(got))"
)


class _Meeting:
    """Tools that return only once ``size`` calls are in flight together (or time out)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.inside = 0
        self.most = 0
        self.lock = threading.Lock()
        self.all_in = threading.Event()

    def enter(self) -> None:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            if self.inside >= self.size:
                self.all_in.set()

    def leave(self) -> None:
        with self.lock:
            self.inside -= 1


def _catalog(meeting: _Meeting) -> ToolCatalog:
    async def meet_async(n: int) -> int:
        """Wait for the others, on the event loop."""
        meeting.enter()
        try:
            for _ in range(200):
                if meeting.all_in.is_set():
                    return n
                await asyncio.sleep(0.01)
            raise TimeoutError("the other calls never came")
        finally:
            meeting.leave()

    def meet_sync(n: int) -> int:
        """Wait for the others, on a thread."""
        meeting.enter()
        try:
            if not meeting.all_in.wait(2.0):
                raise TimeoutError("the other calls never came")
            return n
        finally:
            meeting.leave()

    catalog = ToolCatalog()
    catalog.add_function(meet_async)
    catalog.add_function(meet_sync)
    return catalog


@pytest.mark.parametrize("tool", ["meet_async", "meet_sync"])
def test_gather_runs_the_calls_at_once(tool: str) -> None:
    # Each call returns only once all four are in flight: run one after the other, the
    # first one times out (as it did when a program's calls ran in turn).
    meeting = _Meeting(4)
    session = ToolManager(_catalog(meeting), mode="code").session()
    result = session.call_sync("run_code", {"code": GATHER_FOUR.format(tool=tool)})
    assert result.outcome == "success", result.content
    assert result.content == "[0, 1, 2, 3]"
    assert meeting.most == 4


def test_a_program_runs_at_most_parallel_calls_at_once() -> None:
    meeting = _Meeting(2)
    mode = Code(limits=CodeLimits(parallel_calls=2))
    session = ToolManager(_catalog(meeting), mode=mode).session()
    result = session.call_sync("run_code", {"code": GATHER_FOUR.format(tool="meet_async")})
    assert result.outcome == "success", result.content
    assert meeting.most == 2


def test_programs_waiting_on_a_slow_tool_hold_no_worker() -> None:
    # More programs than workers wait on a slow tool; another caller's trivial program
    # still runs at once (it failed after 30 s when each waiting program kept its worker).
    slow = MAX_WORKERS + 2

    async def scenario() -> str:
        release = asyncio.Event()
        waiting: list[int] = []
        in_flight = asyncio.Event()

        async def slow_read(n: int) -> int:
            """A read from a slow server."""
            waiting.append(n)
            if len(waiting) == slow:
                in_flight.set()
            await release.wait()
            return n

        catalog = ToolCatalog()
        catalog.add_function(slow_read)
        busy = ToolManager(catalog, mode="code")
        programs = [
            asyncio.ensure_future(
                busy.session().call("run_code", {"code": f"await slow_read(n={i})"})
            )
            for i in range(slow)
        ]
        try:
            await asyncio.wait_for(in_flight.wait(), 10)
            other = ToolManager(ToolCatalog(), mode="code").session()
            result = await asyncio.wait_for(other.call("run_code", {"code": "print(6 * 7)"}), 10)
        finally:
            release.set()
            done = await asyncio.gather(*programs)
        assert [r.outcome for r in done] == ["success"] * slow
        return str(result.content)

    assert asyncio.run(scenario()) == "42"


def test_output_over_the_limit_keeps_its_head_and_tail_and_says_what_was_cut() -> None:
    session = ToolManager(ToolCatalog(), mode=Code(limits=CodeLimits(output_chars=2_000))).session()
    code = "for i in range(5000):\n    print('line', i)\nprint('FINAL')\n'LAST'"
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success", result.content
    text = str(result.content)
    assert text.startswith("line 0\nline 1\n")
    assert "characters of printed output cut here" in text
    assert text.endswith("line 4999\nFINAL\nLAST")
    assert len(text) < 2_400
