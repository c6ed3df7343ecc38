"""Load on the MCP gateway: concurrent clients calling ``execute_tool`` over streamable HTTP.

    python bench/gateway_load.py [--clients 50] [--calls 20] [--json OUT]

Starts, on 127.0.0.1 only, a local upstream MCP server (``tests/adapters/mcp/servers/
notes_server.py`` over streamable HTTP) and the gateway in front of it (``python -m
toolmgmt_gateway``, HTTP). Then, in the same run:

1. reference: every client connects to the upstream directly and calls ``echo(token)``;
2. gateway: every client connects to the gateway and calls ``execute_tool("notes_echo",
   {"token": ...})``;

first with one client calling in sequence (the hop's own cost), then with all the clients at once.

Each call carries a unique token that must come back unchanged: a call that fails is "lost", a
call answered with another call's token is "mixed". The table gives latency percentiles per path
and the gateway's added latency (gateway minus direct, same percentile). Bounded: a fixed number
of calls, a deadline for the whole run, loopback only.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``; ``PATH`` is
``{"calls": int, "answered": int, "lost": int, "mixed": int, "p50_ms": float, "p95_ms": float,
"max_ms": float, "calls_per_s": float}``, and a percentile of a path with no answered call is
null)::

    {"clients": int, "calls_per_client": int, "all_answered": bool,
     "one_client": {"calls": int, "direct": PATH, "gateway": PATH, "added": ADDED},
     "concurrent": {"calls": int, "direct": PATH, "gateway": PATH, "added": ADDED}}

where ``ADDED`` is the gateway's added latency, ``{"p50_ms": float, "p95_ms": float,
"mean_ms": float}`` (gateway minus direct, same statistic), or null when a path answered nothing.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))  # support.*: the tests' upstream servers

from _clients import together  # noqa: E402
from _results import write_results  # noqa: E402
from support.upstreams import NOTES, http_upstream  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402

DEADLINE = 600.0
"""Seconds the whole run may take."""
SEQUENTIAL = 100
"""Calls of the single-client reference phase."""


@dataclass
class PathResult:
    """What one path (direct or through the gateway) measured."""

    name: str
    """Which path."""
    latencies: list[float] = field(default_factory=list)
    """Seconds per answered call."""
    lost: int = 0
    """Calls that failed or timed out."""
    mixed: int = 0
    """Calls answered with a token that was not theirs."""
    failures: list[str] = field(default_factory=list)
    """The first few failure messages, to show."""
    wall: float = 0.0
    """Seconds from the first call to the last answer."""

    def percentile(self, share: float) -> float:
        data = sorted(self.latencies)
        if not data:
            return float("nan")
        return data[min(len(data) - 1, int(round(share * (len(data) - 1))))]


def _answer(result: Any) -> str | None:
    """The echoed token: the first text block (the gateway sends a string value as is)."""
    if result.is_error or not result.content:
        return None
    return str(result.content[0].text)


async def run_path(name: str, url: str, clients: int, calls: int, *, gateway: bool) -> PathResult:
    """``clients`` concurrent connections, ``calls`` sequential calls each, unique tokens."""
    result = PathResult(name)

    async def calls_of(number: int, client: Any) -> None:
        for i in range(calls):
            token = f"c{number}-{i}-{uuid.uuid4().hex}"
            started = time.perf_counter()
            try:
                if gateway:
                    reply = await client.call_tool(
                        "execute_tool",
                        {"tool_name": "notes_echo", "arguments": {"token": token}},
                    )
                else:
                    reply = await client.call_tool("echo", {"token": token})
                answer = _answer(reply)
            except Exception as exc:
                result.lost += 1
                if len(result.failures) < 3:
                    result.failures.append(f"{type(exc).__name__}: {exc}")
                continue
            elapsed = time.perf_counter() - started
            if answer is None:
                result.lost += 1
                if len(result.failures) < 3:
                    result.failures.append(f"error result: {reply.content}")
            elif answer != token:
                result.mixed += 1
            else:
                result.latencies.append(elapsed)

    started = time.perf_counter()
    await together(url, clients, calls_of)
    result.wall = time.perf_counter() - started
    return result


def _ms(seconds: float) -> float | None:
    return None if seconds != seconds else round(seconds * 1000, 3)  # NaN: nothing answered


def path_figures(r: PathResult, total: int) -> dict[str, Any]:
    """What one path measured, in milliseconds (the ``PATH`` of the module docstring)."""
    answered = len(r.latencies)
    return {
        "calls": total,
        "answered": answered,
        "lost": r.lost,
        "mixed": r.mixed,
        "p50_ms": _ms(r.percentile(0.5)),
        "p95_ms": _ms(r.percentile(0.95)),
        "max_ms": _ms(max(r.latencies, default=float("nan"))),
        "calls_per_s": round(answered / r.wall, 1) if r.wall else 0.0,
    }


def phase_figures(results: list[PathResult], total: int) -> dict[str, Any]:
    """Both paths of one phase and the gateway's added latency."""
    direct, through = results
    added = None
    if direct.latencies and through.latencies:
        added = {
            "p50_ms": round(1000 * (through.percentile(0.5) - direct.percentile(0.5)), 3),
            "p95_ms": round(1000 * (through.percentile(0.95) - direct.percentile(0.95)), 3),
            "mean_ms": round(
                1000 * (statistics.mean(through.latencies) - statistics.mean(direct.latencies)), 3
            ),
        }
    return {
        "calls": total,
        "direct": path_figures(direct, total),
        "gateway": path_figures(through, total),
        "added": added,
    }


def print_table(results: list[PathResult], phase: dict[str, Any]) -> None:
    header = (
        f"{'path':<18}{'calls':>7}{'answered':>10}{'lost':>6}{'mixed':>7}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'calls/s':>9}"
    )
    print(header)
    print("-" * len(header))
    nan = float("nan")
    for r, key in zip(results, ("direct", "gateway"), strict=True):
        row = phase[key]
        print(
            f"{r.name:<18}{row['calls']:>7}{row['answered']:>10}{row['lost']:>6}{row['mixed']:>7}"
            f"{row['p50_ms'] if row['p50_ms'] is not None else nan:>9.1f}"
            f"{row['p95_ms'] if row['p95_ms'] is not None else nan:>9.1f}"
            f"{row['max_ms'] if row['max_ms'] is not None else nan:>9.1f}"
            f"{row['calls_per_s']:>9.0f}"
        )
    added = phase["added"]
    if added:
        print(
            f"\ngateway added latency: p50 {added['p50_ms']:.1f} ms, p95 {added['p95_ms']:.1f} ms "
            f"(mean {added['mean_ms']:.1f} ms)"
        )


async def main_async(clients: int, calls: int, json_out: Path | None = None) -> int:
    with ExitStack() as stack:
        upstream_url = stack.enter_context(http_upstream(NOTES)).url
        config = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "gateway.toml"
        config.write_text(f'[upstreams.notes]\nurl = "{upstream_url}"\ntimeout = 60\n')
        gateway = stack.enter_context(LocalGateway(config))
        gateway_url = gateway.url
        print(
            f"{clients} clients x {calls} calls, loopback; upstream {upstream_url}, "
            f"gateway {gateway_url}\n"
        )
        with anyio.fail_after(DEADLINE):
            # Warm both paths (imports, first connections) before measuring.
            await run_path("warm-up", upstream_url, 2, 2, gateway=False)
            await run_path("warm-up", gateway_url, 2, 2, gateway=True)
            # One client in sequence: the hop's own cost, without queueing.
            alone = [
                await run_path("direct upstream", upstream_url, 1, SEQUENTIAL, gateway=False),
                await run_path("through gateway", gateway_url, 1, SEQUENTIAL, gateway=True),
            ]
            loaded = [
                await run_path("direct upstream", upstream_url, clients, calls, gateway=False),
                await run_path("through gateway", gateway_url, clients, calls, gateway=True),
            ]
        one_client = phase_figures(alone, SEQUENTIAL)
        concurrent = phase_figures(loaded, clients * calls)
        print(f"one client, {SEQUENTIAL} calls in sequence:")
        print_table(alone, one_client)
        print(f"\n{clients} concurrent clients x {calls} calls:")
        print_table(loaded, concurrent)
        for r in alone + loaded:
            for failure in r.failures:
                print(f"  {r.name}: {failure[:300]}")
        trouble = [
            line.rstrip() for line in gateway.log if re.search(r"WARNING|ERROR|Error|down", line)
        ]
        for line in dict.fromkeys(trouble):  # distinct lines, first seen first
            print(f"  gateway log ({trouble.count(line)}x): {line[:300]}")
        ok = all(len(r.latencies) == clients * calls for r in loaded)
        ok = ok and all(len(r.latencies) == SEQUENTIAL for r in alone)
        print("\nevery call answered with its own token" if ok else "\nSOME CALLS LOST OR MIXED")
        if json_out:
            figures = {
                "clients": clients,
                "calls_per_client": calls,
                "all_answered": ok,
                "one_client": one_client,
                "concurrent": concurrent,
            }
            write_results(json_out, "gateway_load", figures)
        return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    return anyio.run(main_async, args.clients, args.calls, args.json)


if __name__ == "__main__":
    sys.exit(main())
