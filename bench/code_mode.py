"""What a code-mode program costs beyond its tools' own time.

A program making ten tool calls (``run_code`` through a session: the sandbox's worker, each call
through the call pipeline) is timed against the same ten calls made directly through the same
session (the pipeline alone), in the same run, alternating; the overhead is the difference,
per round. The tools are instant, so what is measured is toolmgmt's and the sandbox's own time.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"rounds": int, "calls": 10,
     "program_ms": {"p50": float, "p90": float}, "direct_ms": {"p50": float, "p90": float},
     "overhead_ms": {"p50": float, "p90": float}, "goal_p50_ms": 20.0, "meets_goal": bool,
     "monty": version}

``--against CHECKOUT`` also times, in the same run and alternating, the program driver of another
checkout of toolmgmt (its ``toolmgmt_core/_calls/code/sandbox.py``, over this checkout's
pipeline), adding ``"reference_overhead_ms"`` and ``"against"``.

Run: ``python bench/code_mode.py [--rounds 200] [--against ../main] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402

from toolmgmt_core._calls.request import CallRequest  # noqa: E402
from toolmgmt_core.integration import NO_CONTEXT  # noqa: E402

CALLS = 10
GOAL_P50_MS = 20.0
PROGRAM = (
    "total = 0\n"
    f"for i in range({CALLS}):\n"
    "    order = await get_order(order_id=f'A-{i}')\n"
    "    total += order['amount']\n"
    "print('total', total)"
)


def _session() -> Any:
    from toolmgmt_core import ToolCatalog, ToolManager

    def get_order(order_id: str) -> dict[str, Any]:
        """An order by its id."""
        return {"order_id": order_id, "amount": 12.5, "status": "shipped"}

    catalog = ToolCatalog()
    catalog.add_function(get_order)
    return ToolManager(catalog, mode="code").session()


async def _program(session: Any) -> float:
    started = time.perf_counter()
    result = await session.call("run_code", {"code": PROGRAM})
    assert result.outcome == "success", result.content
    return (time.perf_counter() - started) * 1000


async def _direct(session: Any) -> float:
    view, tool = session._router.view(meta=False), session.resolve("get_order")
    started = time.perf_counter()
    total = 0.0
    for i in range(CALLS):
        # the tool's own pipeline run, as a program's call makes it (code mode lists no tool)
        arguments = {"order_id": f"A-{i}"}
        request = CallRequest("get_order", arguments, NO_CONTEXT, view, tool)
        result = await session.manager.pipeline.execute(request)
        total += result.value["amount"]
    return (time.perf_counter() - started) * 1000


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 3),
        "p90": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 3),
    }


def _reference_driver(checkout: Path) -> Any:
    """``run_program`` of another checkout's sandbox module, taking this one's arguments."""
    import importlib.util

    core = checkout / "toolmgmt_core"
    private = core / "_calls" / "code" / "sandbox.py"  # the packages' names since 42's rename
    path = private if private.exists() else core / "calls" / "code" / "sandbox.py"
    spec = importlib.util.spec_from_file_location("reference_sandbox", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--against: no sandbox module at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    accepted = set(inspect.signature(module.run_program).parameters)

    async def run_program(*args: Any, **kwargs: Any) -> Any:
        return await module.run_program(*args, **{k: v for k, v in kwargs.items() if k in accepted})

    return run_program


async def measure(rounds: int, against: Path | None = None) -> dict[str, Any]:
    import pydantic_monty

    import toolmgmt_core._session.program_runs as code_calls

    drivers = {"this": code_calls.run_program}
    if against is not None:
        drivers["reference"] = _reference_driver(against)
    session = _session()
    for driver in drivers.values():
        code_calls.run_program = driver  # type: ignore[assignment]
        for _ in range(5):  # warm: the worker pool, the tokenizer, the caches
            await _program(session)
            await _direct(session)
    programs: list[float] = []
    directs: list[float] = []
    overheads: dict[str, list[float]] = {label: [] for label in drivers}
    try:
        for i in range(rounds):
            for label, driver in sorted(drivers.items(), reverse=i % 2 == 1):
                code_calls.run_program = driver  # type: ignore[assignment]
                program = await _program(session)
                direct = await _direct(session)
                if label == "this":
                    programs.append(program)
                    directs.append(direct)
                overheads[label].append(program - direct)
    finally:
        code_calls.run_program = drivers["this"]  # type: ignore[assignment]
    overhead = _quantiles(overheads["this"])
    reference = (
        {"reference_overhead_ms": _quantiles(overheads["reference"]), "against": str(against)}
        if against is not None
        else {}
    )
    return {
        "rounds": rounds,
        "calls": CALLS,
        "program_ms": _quantiles(programs),
        "direct_ms": _quantiles(directs),
        "overhead_ms": overhead,
        "goal_p50_ms": GOAL_P50_MS,
        "meets_goal": overhead["p50"] <= GOAL_P50_MS,
        "monty": pydantic_monty.__version__,
        **reference,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--against", type=Path, help="another checkout's driver to compare")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    figures = asyncio.run(measure(args.rounds, args.against))
    print(f"| {CALLS}-call program | p50 ms | p90 ms |")
    print("|---|---|---|")
    for label, key in (("run_code", "program_ms"), ("direct calls", "direct_ms")):
        print(f"| {label} | {figures[key]['p50']} | {figures[key]['p90']} |")
    overhead = figures["overhead_ms"]
    print(f"| overhead | {overhead['p50']} | {overhead['p90']} |")
    if "reference_overhead_ms" in figures:
        ref = figures["reference_overhead_ms"]
        print(f"| overhead, {figures['against']}'s driver | {ref['p50']} | {ref['p90']} |")
    verdict = "meets" if figures["meets_goal"] else "misses"
    print(f"\noverhead p50 {overhead['p50']} ms {verdict} the goal of <= {GOAL_P50_MS} ms")
    if args.json:
        write_results(args.json, "code_mode", figures)


if __name__ == "__main__":
    main()
