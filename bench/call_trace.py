"""How many of the project's own functions one tool call runs, per way in (issue 42).

A call should flow down once: resolved once, the list planned once, one request handed down.
This bench counts it. A profiler hook (``sys.setprofile`` and ``threading.setprofile``) counts
every Python function call whose code lives in the product's packages (``toolmgmt_core``, the
adapters, the gateway; not the demo tools, the frameworks or the SDKs) while one tool call runs,
after a warm-up call of the same kind, and times the same call unprofiled:

- ``langchain_flat``: a ``create_agent`` graph with ``ToolManagerMiddleware`` over the demo
  catalog (151 tools) in flat mode; the tool node's call of one demo tool.
- ``langchain_search``: the same in search mode; the model calls a found tool through
  ``call_tool``.
- ``gateway_execute``: the MCP gateway in process over one stdio upstream (the notes server of
  the tests), an ``mcp.Client`` calling ``execute_tool``; the gateway's side only (the upstream is
  its own process).

``--versus REF`` measures REF's code beside this checkout's, each in a fresh process.

Run: ``python bench/call_trace.py [--versus REF] [--rounds 3] [--json FILE]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from _reference import run_here, run_with  # noqa: E402
from _results import write_results  # noqa: E402

WAYS = ("langchain_flat", "langchain_search", "gateway_execute")
_PACKAGES = (
    "toolmgmt_core",
    "toolmgmt_langchain",
    "toolmgmt_pydantic_ai",
    "toolmgmt_litellm",
    "toolmgmt_mcp",
    "toolmgmt_gateway",
)
_TIMED = 30


class _Counter:
    """Counts the product's function calls on every thread while it is on."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._product: dict[Any, str | None] = {}
        self._on = False

    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call" or not self._on:
            return
        code = frame.f_code
        where = self._product.get(code)
        if where is None and code not in self._product:
            parts = Path(code.co_filename).parts
            where = next(
                (f"{p}:{code.co_name}" for p in _PACKAGES if p in parts and "tests" not in parts),
                None,
            )
            self._product[code] = where
        if where is not None:
            self.calls[where] += 1

    def __enter__(self) -> _Counter:
        self._on = True
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._on = False
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _langchain(mode: str) -> dict[str, Any]:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from toolmgmt_langchain import ToolManagerMiddleware

    from toolmgmt_core import ToolCatalog, ToolManager
    from toolmgmt_demo import demo_catalog
    from toolmgmt_demo.models.langchain import ScriptedChatModel

    catalog = demo_catalog()
    manager = ToolManager(ToolCatalog(list(catalog)), mode=mode)
    tool, arguments = "web_search_get_weather_forecast", {"location": "Oslo"}
    if mode == "search":
        tool, arguments = "call_tool", {"name": tool, "arguments": arguments}
    counter = _Counter()

    class Counted(ToolManagerMiddleware):  # type: ignore[misc]
        counting = False

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            if not self.counting:
                return await super().awrap_tool_call(request, handler)
            with counter:
                return await super().awrap_tool_call(request, handler)

    middleware = Counted(manager, provider="anthropic")  # OpenAI takes at most 128 tools

    def run(counting: bool) -> float:
        middleware.counting = counting
        model = ScriptedChatModel(
            script=[
                AIMessage(content="", tool_calls=[{"name": tool, "args": arguments, "id": "c1"}]),
                AIMessage(content="done"),
            ]
        )
        agent = create_agent(model, middleware=[middleware])
        clock = time.perf_counter()
        state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Weather in Oslo?")]}))
        elapsed = time.perf_counter() - clock
        assert '"error"' not in str(state["messages"][-2].content)[:200], state["messages"][-2]
        return elapsed

    run(False)  # warm-up: indexes, caches, imports
    run(True)
    times = [run(False) for _ in range(_TIMED)]
    return _figures(counter, times)


def _gateway() -> dict[str, Any]:
    from mcp import Client
    from toolmgmt_gateway import Gateway, parse_config

    notes = ROOT / "tests" / "adapters" / "mcp" / "servers" / "notes_server.py"
    config = (
        f"[upstreams.notes]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(notes))}]\n"
    )
    counter = _Counter()
    arguments = {"tool_name": "notes_list_notes", "arguments": {}}

    async def drive() -> list[float]:
        async with Gateway(parse_config(config)) as gateway, Client(gateway.server) as client:
            await client.call_tool("execute_tool", arguments)  # warm-up
            with counter:
                result = await client.call_tool("execute_tool", arguments)
            assert not result.is_error, result
            times = []
            for _ in range(_TIMED):
                clock = time.perf_counter()
                await client.call_tool("execute_tool", arguments)
                times.append(time.perf_counter() - clock)
            return times

    return _figures(counter, asyncio.run(drive()))


def _figures(counter: _Counter, times: list[float]) -> dict[str, Any]:
    return {
        "calls": sum(counter.calls.values()),
        "top": counter.calls.most_common(12),
        "p50_ms": round(statistics.median(times) * 1000, 3),
    }


def measure(way: str) -> dict[str, Any]:
    """One way in's count and p50 (called in a fresh process, by :func:`main`)."""
    if way == "gateway_execute":
        return _gateway()
    return _langchain("flat" if way == "langchain_flat" else "search")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versus", help="a git ref measured beside this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per way and side")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    sides = {"here": lambda way: run_here("call_trace", "measure", way)}
    if args.versus:
        sides = {
            args.versus: lambda way: run_with(args.versus, "call_trace", "measure", way),
            **sides,
        }
    figures: dict[str, Any] = {"python": sys.version.split()[0], "ways": {}}
    for way in WAYS:
        rows = {}
        # Rounds alternate between the sides, so a busy spell of the machine skews neither.
        every: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, measure_side in sides.items():
                every[side].append(measure_side(way))
        for side, runs in every.items():
            rows[side] = {
                "calls": min(r["calls"] for r in runs),
                "p50_ms": round(statistics.median(r["p50_ms"] for r in runs), 3),
                "top": runs[0]["top"],
            }
        figures["ways"][way] = rows
    print(f"{'way':<18} " + " ".join(f"{s[:12]:>14} {'p50 ms':>8}" for s in sides))
    for way, rows in figures["ways"].items():
        cells = " ".join(f"{r['calls']:>14,} {r['p50_ms']:>8.2f}" for r in rows.values())
        print(f"{way:<18} {cells}")
    if args.json:
        write_results(args.json, "call_trace", figures)


if __name__ == "__main__":
    main()
