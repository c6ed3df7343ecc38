"""Whether one caller's slow programs delay another's: code mode's sandbox under load.

One caller keeps ``--slow`` programs running (each waits ``--tool-seconds`` on a tool of a slow
server, then starts again); another runs ``print(6 * 7)`` ``--rounds`` times idle and as many
times under that load, in four turns of each (the machine's drift falls on both). Its latency
is timed in the same run twice: as code mode runs (a program waiting
on its tools hands its worker back; one caller holds at most ``CLIENT_WORKERS`` workers) and,
as the reference, with each waiting program keeping its worker and one caller free to hold
every worker (as before). The goal: the other caller's p50 under load within 1.5x its idle p50.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"slow_programs": int, "tool_seconds": float, "workers": int, "client_workers": int,
     "rounds": int,
     "runs": {"hands back": {"idle_ms": {...}, "loaded_ms": {...}, "ratio": float},
              "keeps worker": {...}},
     "goal_ratio": 1.5, "meets_goal": bool, "monty": version, "python": version}

Run: ``python bench/code_fair_share.py [--slow 8] [--rounds 40] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402

GOAL_RATIO = 1.5
TRIVIAL = "print(6 * 7)"


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p90": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 2),
    }


async def _trivial(session: Any, rounds: int) -> list[float]:
    took = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = await session.call("run_code", {"code": TRIVIAL})
        assert result.content == "42", result.content
        took.append((time.perf_counter() - started) * 1000)
    return took


async def _run(
    slow: int, tool_seconds: float, rounds: int, at_once: int, cycles: int
) -> dict[str, Any]:
    """One run; the load is on once ``at_once`` of the busy caller's calls wait together."""
    from toolmgmt_core import ToolCatalog, ToolManager

    in_flight = 0
    loaded = asyncio.Event()

    async def slow_read(n: int) -> int:
        """A read from a slow server."""
        nonlocal in_flight
        in_flight += 1
        if in_flight >= at_once:
            loaded.set()
        try:
            await asyncio.sleep(tool_seconds)
        finally:
            in_flight -= 1
        return n

    catalog = ToolCatalog()
    catalog.add_function(slow_read)
    busy = ToolManager(catalog, mode="code")
    other = ToolManager(ToolCatalog(), mode="code").session()
    await _trivial(other, 20)  # warm: the pool, the caches
    idle: list[float] = []
    under_load: list[float] = []
    # Idle and loaded in turns, so that the machine's drift falls on both.
    for _ in range(cycles):
        idle += await _trivial(other, rounds)
        stop = asyncio.Event()

        async def keep_running(n: int, stop: asyncio.Event = stop) -> None:
            session = busy.session("busy-caller")  # one caller: one share of the workers
            while not stop.is_set():
                await session.call("run_code", {"code": f"await slow_read(n={n})"})

        keepers = [asyncio.ensure_future(keep_running(n)) for n in range(slow)]
        try:
            await asyncio.wait_for(loaded.wait(), 60)
            under_load += await _trivial(other, rounds)
        finally:
            stop.set()
            await asyncio.gather(*keepers)
            loaded.clear()
    idle_q, loaded_q = _quantiles(idle), _quantiles(under_load)
    return {
        "idle_ms": idle_q,
        "loaded_ms": loaded_q,
        "ratio": round(loaded_q["p50"] / idle_q["p50"], 2),
    }


def measure(slow: int, tool_seconds: float, rounds: int) -> dict[str, Any]:
    import pydantic_monty

    import toolmgmt_core._calls.code.sandbox as sandbox
    import toolmgmt_core._calls.code.workers as workers

    runs = {"hands back": asyncio.run(_run(slow, tool_seconds, rounds // 4 or 1, slow, 4))}
    # The reference, as before: a waiting program keeps its worker, and one caller may hold
    # every worker (only as many of its calls wait at once: the others wait for a worker).
    sandbox.HOLD_SECONDS = 3600.0  # type: ignore[attr-defined]
    workers._SHARES.share = workers.MAX_WORKERS
    try:
        at_once = min(slow, workers.MAX_WORKERS)
        runs["keeps worker"] = asyncio.run(_run(slow, tool_seconds, 3, at_once, 2))
    finally:
        sandbox.HOLD_SECONDS = workers.HOLD_SECONDS  # type: ignore[attr-defined]
        workers._SHARES.share = workers.CLIENT_WORKERS
    return {
        "slow_programs": slow,
        "tool_seconds": tool_seconds,
        "workers": workers.MAX_WORKERS,
        "client_workers": workers.CLIENT_WORKERS,
        "rounds": rounds,
        "runs": runs,
        "goal_ratio": GOAL_RATIO,
        "meets_goal": runs["hands back"]["ratio"] <= GOAL_RATIO,
        "monty": pydantic_monty.__version__,
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=8, help="the busy caller's programs")
    parser.add_argument("--tool-seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.slow < 1 or args.rounds < 1 or args.tool_seconds <= 0:
        parser.error("--slow and --rounds must be at least 1, --tool-seconds above 0")
    figures = measure(args.slow, args.tool_seconds, args.rounds)
    print(
        f"another caller's {TRIVIAL} while one keeps {args.slow} programs waiting "
        f"{args.tool_seconds:g}s on a tool ({figures['workers']} workers, "
        f"pydantic-monty {figures['monty']})\n"
    )
    print("| waiting program | idle p50 ms | loaded p50 ms | loaded p90 ms | loaded / idle |")
    print("|---|---|---|---|---|")
    for label, run in figures["runs"].items():
        print(
            f"| {label} | {run['idle_ms']['p50']} | {run['loaded_ms']['p50']} | "
            f"{run['loaded_ms']['p90']} | {run['ratio']}x |"
        )
    verdict = "meets" if figures["meets_goal"] else "misses"
    print(f"\n{figures['runs']['hands back']['ratio']}x {verdict} the goal of <= {GOAL_RATIO}x")
    if args.json:
        write_results(args.json, "code_fair_share", figures)


if __name__ == "__main__":
    main()
