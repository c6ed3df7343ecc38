"""Load on the MCP gateway: concurrent clients calling ``execute_tool`` over streamable HTTP.

    python bench/gateway_load.py [--clients 50] [--calls 20]

Starts, on 127.0.0.1 only, a local upstream MCP server (``tests/adapters/mcp/servers/
notes_server.py`` over streamable HTTP) and the gateway in front of it (``python -m
toolmgmt_mcp``, HTTP). Then, in the same run:

1. reference: every client connects to the upstream directly and calls ``echo(token)``;
2. gateway: every client connects to the gateway and calls ``execute_tool("notes_echo",
   {"token": ...})``;

first with one client calling in sequence (the hop's own cost), then with all the clients at once.

Each call carries a unique token that must come back unchanged: a call that fails is "lost", a
call answered with another call's token is "mixed". The table gives latency percentiles per path
and the gateway's added latency (gateway minus direct, same percentile). Bounded: a fixed number
of calls, a deadline for the whole run, loopback only.
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "tests" / "adapters" / "mcp" / "servers" / "notes_server.py"
DEADLINE = 600.0
"""Seconds the whole run may take."""
SEQUENTIAL = 100
"""Calls of the single-client reference phase."""
GATEWAY_LOG: list[str] = []
"""The gateway's stderr, for the report of anything that went wrong."""


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the upstream exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def start_gateway(config: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "toolmgmt_mcp", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            GATEWAY_LOG.append(line.rstrip())
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60) or not found:
        process.kill()
        raise RuntimeError("the gateway did not start")
    return process, found[0]


def _answer(result: Any) -> str | None:
    """The echoed token: the first text block (the gateway sends a string value as is)."""
    if result.is_error or not result.content:
        return None
    return str(result.content[0].text)


async def run_path(name: str, url: str, clients: int, calls: int, *, gateway: bool) -> PathResult:
    """``clients`` concurrent connections, ``calls`` sequential calls each, unique tokens."""
    result = PathResult(name)
    connected = anyio.Event()
    ready = 0

    async def one_client(number: int) -> None:
        nonlocal ready
        async with Client(url) as client:
            ready += 1
            if ready == clients:
                connected.set()
            await connected.wait()  # every connection open before the first call
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
    async with anyio.create_task_group() as tasks:
        for number in range(clients):
            tasks.start_soon(one_client, number)
    result.wall = time.perf_counter() - started
    return result


def print_table(results: list[PathResult], total: int) -> None:
    header = (
        f"{'path':<18}{'calls':>7}{'answered':>10}{'lost':>6}{'mixed':>7}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'calls/s':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        answered = len(r.latencies)
        print(
            f"{r.name:<18}{total:>7}{answered:>10}{r.lost:>6}{r.mixed:>7}"
            f"{r.percentile(0.5) * 1000:>9.1f}{r.percentile(0.95) * 1000:>9.1f}"
            f"{max(r.latencies, default=float('nan')) * 1000:>9.1f}"
            f"{answered / r.wall if r.wall else 0:>9.0f}"
        )
    direct, through = results
    if not (direct.latencies and through.latencies):
        return
    p50 = 1000 * (through.percentile(0.5) - direct.percentile(0.5))
    p95 = 1000 * (through.percentile(0.95) - direct.percentile(0.95))
    mean = 1000 * (statistics.mean(through.latencies) - statistics.mean(direct.latencies))
    print(f"\ngateway added latency: p50 {p50:.1f} ms, p95 {p95:.1f} ms (mean {mean:.1f} ms)")


async def main_async(clients: int, calls: int) -> int:
    port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, str(NOTES), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    gateway: subprocess.Popen[str] | None = None
    try:
        wait_for_port(port, upstream)
        upstream_url = f"http://127.0.0.1:{port}/mcp"
        with tempfile.TemporaryDirectory() as folder:
            config = Path(folder) / "gateway.toml"
            config.write_text(
                '[gateway]\ntransport = "http"\nport = 0\n\n'
                f'[upstreams.notes]\nurl = "{upstream_url}"\ntimeout = 60\n'
            )
            gateway, gateway_url = start_gateway(config)
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
        print(f"one client, {SEQUENTIAL} calls in sequence:")
        print_table(alone, SEQUENTIAL)
        print(f"\n{clients} concurrent clients x {calls} calls:")
        print_table(loaded, clients * calls)
        for r in alone + loaded:
            for failure in r.failures:
                print(f"  {r.name}: {failure[:300]}")
        trouble = [line for line in GATEWAY_LOG if re.search(r"WARNING|ERROR|Error|down", line)]
        for line in dict.fromkeys(trouble):  # distinct lines, first seen first
            print(f"  gateway log ({trouble.count(line)}x): {line[:300]}")
        ok = all(len(r.latencies) == clients * calls for r in loaded)
        ok = ok and all(len(r.latencies) == SEQUENTIAL for r in alone)
        print("\nevery call answered with its own token" if ok else "\nSOME CALLS LOST OR MIXED")
        return 0 if ok else 1
    finally:
        for process in (gateway, upstream):
            if process is not None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    return anyio.run(main_async, args.clients, args.calls)


if __name__ == "__main__":
    sys.exit(main())
