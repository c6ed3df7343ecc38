"""How long a program's gathered calls take: ``asyncio.gather`` of four 1-second tools.

The same four calls are timed gathered and, as the reference in the same run, one after the
other, for an async tool (``asyncio.sleep``, run on the event loop) and a sync one
(``time.sleep``, run on the core's thread lanes). The goal: four gathered 1-second calls in at
most 1.3 s.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"calls": 4, "tool_seconds": float, "rounds": int,
     "seconds": {"async": {"gathered": float, "in turn": float}, "sync": {...}},
     "goal_seconds": 1.3, "meets_goal": bool, "monty": version, "python": version}

Run: ``python bench/code_gather.py [--rounds 2] [--json bench/results/code_gather.json]``.
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

CALLS = 4
GOAL_SECONDS = 1.3
PROGRAMS = {
    "gathered": (
        "import asyncio\n"
        f"got = await asyncio.gather(*[{{tool}}(n=i) for i in range({CALLS})])\n"
        "print(sum(got))"
    ),
    "in turn": f"got = [await {{tool}}(n=i) for i in range({CALLS})]\nprint(sum(got))",
}


def _session(seconds: float) -> Any:
    from toolmgmt_core import ToolCatalog, ToolManager

    async def wait_async(n: int) -> int:
        """Wait on the event loop."""
        await asyncio.sleep(seconds)
        return n

    def wait_sync(n: int) -> int:
        """Wait on a thread."""
        time.sleep(seconds)
        return n

    catalog = ToolCatalog()
    catalog.add_function(wait_async)
    catalog.add_function(wait_sync)
    return ToolManager(catalog, mode="code").session()


async def measure(rounds: int, seconds: float) -> dict[str, Any]:
    import pydantic_monty

    session = _session(seconds)
    await session.call("run_code", {"code": "print(1)"})  # warm: the worker pool
    timings: dict[str, dict[str, float]] = {}
    for kind, tool in (("async", "wait_async"), ("sync", "wait_sync")):
        timings[kind] = {}
        for label, program in PROGRAMS.items():
            took = []
            for _ in range(rounds):
                started = time.perf_counter()
                result = await session.call("run_code", {"code": program.format(tool=tool)})
                assert result.content == str(sum(range(CALLS))), result.content
                took.append(time.perf_counter() - started)
            timings[kind][label] = round(statistics.median(took), 3)
    worst = max(t["gathered"] for t in timings.values())
    return {
        "calls": CALLS,
        "tool_seconds": seconds,
        "rounds": rounds,
        "seconds": timings,
        "goal_seconds": GOAL_SECONDS,
        "meets_goal": worst <= GOAL_SECONDS,
        "monty": pydantic_monty.__version__,
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tool-seconds", type=float, default=1.0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.rounds < 1 or args.tool_seconds <= 0:
        parser.error("--rounds must be at least 1, --tool-seconds above 0")
    figures = asyncio.run(measure(args.rounds, args.tool_seconds))
    print(
        f"{CALLS} calls of a {args.tool_seconds:g}-second tool in one program "
        f"(pydantic-monty {figures['monty']}, median of {args.rounds})\n"
    )
    print("| tool | gathered s | one after the other s |")
    print("|---|---|---|")
    for kind, took in figures["seconds"].items():
        print(f"| {kind} | {took['gathered']} | {took['in turn']} |")
    verdict = "meets" if figures["meets_goal"] else "misses"
    print(f"\ngathered {verdict} the goal of <= {GOAL_SECONDS} s")
    if args.json:
        write_results(args.json, "code_gather", figures)


if __name__ == "__main__":
    main()
