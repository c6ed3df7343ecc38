"""A flood of slow requests on one gateway replica, and another client's latency meanwhile.

    python bench/admission.py [--flood 500] [--at-once 100] [--seconds 20] [--json OUT]

Starts, on 127.0.0.1 only, a throw-away Redis (conversations, ``[store] sessions``) and one
gateway replica (``python -m toolmgmt_gateway --http``) in front of the notes upstream (stdio), with
two clients of their own tokens (``[gateway.clients]``): ``bulk`` floods it with ``--flood``
2025 sessions, ``--at-once`` of them open at a time (the finding of issue 32: 500 sessions, 100
at a time), each opening, calling a slow tool (``notes_slow_echo``, 2 s) ``--calls`` times and
closing, then the next one, honouring ``Retry-After`` when refused; ``interactive`` calls a
quick one (``notes_echo``) every 50 ms and its latency is what is measured. Four phases, each on
a fresh replica, in the same run:

1. ``alone``: the interactive client alone (the reference);
2. ``flood, no limit``: ``max_requests = 0`` (no share for ``bulk`` either);
3. ``flood, defaults``: the defaults, ``max_requests = 64`` and each client's share half of it;
4. ``flood, tight``: ``--max-requests`` (32) and ``bulk``'s share ``--share`` (8);
5. ``flood elsewhere``: the defaults, the same flood sent to a second replica on the same host:
   what the host's shared cores alone cost the interactive client (the flood's client and the
   other replica's work), its event loop, store and admission untouched.

``bulk``'s requests past its share get 503 at once. The goal: the interactive client's p50
under the flood with the defaults within 2x of its p50 alone (the last line says the ratio),
and no worse than with the flood elsewhere (on a busy host, where the other work on its cores
slows every process down, that is the part of the ratio the replica answers for).

The flood runs in a process of its own, so its client-side work does not delay the measuring
client's event loop (they share the machine's cores, as they would share a host). Its client
writes its HTTP/1.1 requests by hand, one keep-alive connection per lane: with httpx it used 2.5
times the replica's CPU for the same requests (12-30% of a core against 8-18%), host contention
that a flooder on another machine does not cause; now about 2%, and the replica gets more of the
flood, not less (at load 21: 184 slow calls answered and 553 refused in 15 s, against about 75
and 120). Bounded: a fixed duration per phase, a deadline per request, loopback only.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"default_max_requests": int, "flood_sessions": int, "at_once": int, "seconds": float,
     "max_requests": int, "share": int, "p50_ratio_defaults": float,
     "p50_ratio_elsewhere": float,     # flood, defaults / flood elsewhere
     "phases": {NAME: {"calls": int, "answered": int, "refused": int, "p50_ms": float,
                       "p95_ms": float, "max_ms": float,
                       "flood": {"answered": int, "refused": int, "failed": int}}}}

where ``refused`` counts 503s, and a phase's ``flood`` is null for ``alone``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402

NOTES = ROOT / "tests" / "adapters" / "mcp" / "servers" / "notes_server.py"
TOKENS = {"BULK_TOKEN": "bulk-token-0123456789", "INTERACTIVE_TOKEN": "interactive-token-0123"}
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
SLOW = 2.0
"""Seconds each flood call takes at the upstream."""
WARM = 3.0
"""Seconds the flood runs before the interactive client starts measuring."""
PERIOD = 0.05
"""Seconds between two interactive calls."""
ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _config(folder: Path, redis_url: str, max_requests: int | None, share: int | None) -> Path:
    """A replica's config; ``max_requests`` None: the default; ``share`` None: bulk's default."""
    bulk_share = f"max_requests = {share}\n" if share else ""
    text = (
        "[gateway]\n" + ("" if max_requests is None else f"max_requests = {max_requests}\n") + "\n"
        f'[gateway.clients.bulk]\ntoken_env = "BULK_TOKEN"\n{bulk_share}\n'
        '[gateway.clients.interactive]\ntoken_env = "INTERACTIVE_TOKEN"\n\n'
        f"[upstreams.notes]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(NOTES))}]\ntimeout = 60\n\n"
        f'[store]\nsessions = "{redis_url}"\nsession_ttl = 600\n'
    )
    path = folder / f"gateway-{max_requests}-{share}.toml"
    path.write_text(text)
    return path


# -- the flood (a process of its own) ------------------------------------------------------------


class _Connection:
    """One keep-alive HTTP/1.1 connection of the flood, requests written and answers read
    by hand: the flood's client should cost the shared host little (httpx cost it 2.5 times
    the replica's own CPU for the same requests); the replica sees the same requests."""

    def __init__(self, url: str) -> None:
        rest = url.split("//", 1)[1]
        self.address, _, path = rest.partition("/")
        self.host, _, port = self.address.partition(":")
        self.port, self.path = int(port or 80), "/" + path
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(
        self, method: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        """Send one request; its status, headers (lower-case names) and body. Raises OSError
        (or asyncio.IncompleteReadError) when the connection fails; the next opens another."""
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        lines = [f"{method} {self.path} HTTP/1.1", f"host: {self.address}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"content-length: {len(body)}")
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            status = int(head[0].split()[1])
            got = {
                k.strip().lower(): v.strip()
                for k, _, v in (h.partition(":") for h in head[1:] if h)
            }
            if got.get("transfer-encoding") == "chunked":
                content = b""
                while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                    content += (await reader.readexactly(size + 2))[:-2]
                await reader.readuntil(b"\r\n")
            else:
                content = await reader.readexactly(int(got.get("content-length", "0")))
            if got.get("connection") == "close":
                self.close()
            return status, got, content
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


async def flood(
    url: str, sessions: int, seconds: float, at_once: int | None = None, calls: int = 0
) -> dict[str, int]:
    """2025 sessions of ``bulk`` until ``seconds`` have passed, ``at_once`` open at a time
    (None: all ``sessions``), each calling the slow tool ``calls`` times (0: until the end)
    and then closing, the next one taking its place (``sessions`` in all, then again); what
    they got. Each lane of sessions keeps one connection (:class:`_Connection`)."""
    counts = {"answered": 0, "refused": 0, "failed": 0, "sessions": 0}
    auth = {"authorization": f"Bearer {TOKENS['BULK_TOKEN']}"}
    end = time.monotonic() + seconds

    async def post(
        client: _Connection, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, str]] | None:
        data = json.dumps(body).encode()
        while time.monotonic() < end:
            try:
                status, got, _ = await asyncio.wait_for(
                    client.request("POST", headers, data), timeout=60
                )
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
                counts["failed"] += 1
                await asyncio.sleep(0.5)
                continue
            if status != 503:
                return status, got
            counts["refused"] += 1
            await asyncio.sleep(float(got.get("retry-after", "1")))
        return None

    async def session(client: _Connection, number: int) -> None:
        params = {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "bulk", "version": "0"},
        }
        opening = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        opened = await post(client, opening, {**ACCEPT, **auth})
        if opened is None or "mcp-session-id" not in opened[1]:
            return
        headers = {**ACCEPT, **auth, "mcp-session-id": opened[1]["mcp-session-id"]}
        headers["mcp-protocol-version"] = HANDSHAKE
        await post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        arguments = {
            "tool_name": "notes_slow_echo",
            "arguments": {"token": f"b{number}", "delay": SLOW},
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": arguments},
        }
        made = 0
        while time.monotonic() < end and (not calls or made < calls):
            answered = await post(client, call, headers)
            made += 1
            if answered is not None:
                counts["answered" if answered[0] == 200 else "failed"] += 1
        counts["sessions"] += 1
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            await asyncio.wait_for(client.request("DELETE", headers), timeout=60)

    width = min(at_once or sessions, sessions)

    async def lane(first: int) -> None:
        client = _Connection(url)
        number = first
        try:
            while time.monotonic() < end:
                await session(client, number % sessions)
                number += width
        finally:
            client.close()

    await asyncio.gather(*(lane(n) for n in range(width)))
    return counts


# -- the interactive client -----------------------------------------------------------------------


def interactive(url: str, seconds: float) -> dict[str, Any]:
    """Quick 2026 calls every :data:`PERIOD` for ``seconds``: their latencies."""
    import httpx

    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        **ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "execute_tool",
        "authorization": f"Bearer {TOKENS['INTERACTIVE_TOKEN']}",
    }
    latencies: list[float] = []
    refused = calls = 0
    gc.collect()  # this process's own full collections (70-180 ms on a loaded host) would
    gc.freeze()  # land at random in the measured calls, alone or flooded
    end = time.monotonic() + seconds
    with httpx.Client(timeout=60) as client:
        while time.monotonic() < end:
            calls += 1
            token = f"i{calls}"
            params = {
                "name": "execute_tool",
                "_meta": meta,
                "arguments": {"tool_name": "notes_echo", "arguments": {"token": token}},
            }
            body = {"jsonrpc": "2.0", "id": calls, "method": "tools/call", "params": params}
            started = time.perf_counter()
            try:
                response = client.post(url, json=body, headers=headers)
            except httpx.HTTPError:
                continue
            took = time.perf_counter() - started
            if response.status_code == 503:
                refused += 1
            elif response.status_code == 200 and token in response.text:
                latencies.append(took)
            time.sleep(PERIOD)
    latencies.sort()

    def pick(share: float) -> float | None:
        if not latencies:
            return None
        return round(1000 * latencies[min(len(latencies) - 1, int(share * len(latencies)))], 1)

    return {
        "calls": calls,
        "answered": len(latencies),
        "refused": refused,
        "p50_ms": pick(0.5),
        "p95_ms": pick(0.95),
        "max_ms": pick(1.0),
    }


def phase(
    config: Path,
    sessions: int,
    seconds: float,
    at_once: int = 0,
    calls: int = 0,
    elsewhere: bool = False,
) -> dict[str, Any]:
    """One replica of ``config``; the interactive client's figures, with ``sessions`` flooding
    (none: alone), ``at_once`` at a time; ``elsewhere``: flooding a second replica instead."""
    from toolmgmt_deploy.replica import LocalGateway

    env = {**os.environ, **TOKENS}
    with ExitStack() as stack:
        replica = stack.enter_context(LocalGateway(config, env=env))
        other = stack.enter_context(LocalGateway(config, env=env)) if elsewhere else replica
        url, target = replica.url, other.url
        assert url is not None and target is not None
        interactive(url, 1.0)  # warm: imports, the upstream's first calls
        worker = None
        if sessions:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--flood-worker",
                    target,
                    str(sessions),
                    str(seconds + WARM),
                    str(at_once or sessions),
                    str(calls),
                ],
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, **TOKENS},
            )
            time.sleep(WARM)
        figures = interactive(url, seconds)
        if worker is not None:
            out, _ = worker.communicate(timeout=seconds + WARM + 120)
            figures["flood"] = json.loads(out.strip().splitlines()[-1])
        else:
            figures["flood"] = None
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--flood", type=int, default=500, help="bulk's sessions")
    parser.add_argument("--at-once", type=int, default=100, help="bulk's sessions open at once")
    parser.add_argument("--calls", type=int, default=1, help="slow calls per bulk session")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds a phase")
    parser.add_argument("--max-requests", type=int, default=32, help="the tight phase's")
    parser.add_argument("--share", type=int, default=8, help="bulk's, in the tight phase")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--flood-worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood_worker:
        url, sessions, seconds, at_once, calls = args.flood_worker
        counts = flood(url, int(sessions), float(seconds), int(at_once), int(calls))
        print(json.dumps(asyncio.run(counts)), flush=True)
        return 0
    from toolmgmt_deploy import LocalRedis

    phases: dict[str, Any] = {}
    with ExitStack() as stack:
        redis = stack.enter_context(LocalRedis())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        plan = [
            ("alone", _config(folder, redis.url, 0, None), 0),
            ("flood, no limit", _config(folder, redis.url, 0, None), args.flood),
            ("flood, defaults", _config(folder, redis.url, None, None), args.flood),
            ("flood, tight", _config(folder, redis.url, args.max_requests, args.share), args.flood),
            ("flood elsewhere", _config(folder, redis.url, None, None), args.flood),
        ]
        for name, config, sessions in plan:
            phases[name] = phase(
                config, sessions, args.seconds, args.at_once, args.calls, name == "flood elsewhere"
            )
            print(f"{name}: {phases[name]}", file=sys.stderr, flush=True)
    header = (
        f"{'phase':<18}{'calls':>7}{'answered':>10}{'503':>6}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'max ms':>9}  flood (answered / 503 / failed)"
    )
    print(
        f"\n{args.flood} bulk sessions, {args.at_once} at a time, each calling a {SLOW:g} s tool "
        f"{args.calls} time(s); interactive calls every {PERIOD * 1000:g} ms for "
        f"{args.seconds:g} s\n"
    )
    print(header)
    print("-" * len(header))
    for name, row in phases.items():
        flood_row = row["flood"]
        flood_text = (
            ""
            if flood_row is None
            else (f"{flood_row['answered']} / {flood_row['refused']} / {flood_row['failed']}")
        )
        print(
            f"{name:<18}{row['calls']:>7}{row['answered']:>10}{row['refused']:>6}"
            f"{row['p50_ms'] or float('nan'):>9.1f}{row['p95_ms'] or float('nan'):>9.1f}"
            f"{row['max_ms'] or float('nan'):>9.1f}  {flood_text}"
        )
    alone, flooded = phases["alone"]["p50_ms"], phases["flood, defaults"]["p50_ms"]
    ratio = round(flooded / alone, 2) if alone and flooded else None
    host = phases["flood elsewhere"]["p50_ms"]
    ratio_host = round(flooded / host, 2) if host and flooded else None
    print(
        f"\ninteractive p50: {alone} ms alone, {flooded} ms under the flood with the defaults: "
        f"{ratio}x (goal: within 2x); {host} ms with the flood on another replica of this "
        f"host: {ratio_host}x of that (load {os.getloadavg()[0]:.1f})"
    )
    if args.json:
        from toolmgmt_gateway.config import GatewaySettings

        figures = {
            "default_max_requests": GatewaySettings().max_requests,
            "flood_sessions": args.flood,
            "at_once": args.at_once,
            "p50_ratio_defaults": ratio,
            "p50_ratio_elsewhere": ratio_host,
            "seconds": args.seconds,
            "max_requests": args.max_requests,
            "share": args.share,
            "phases": phases,
        }
        write_results(args.json, "admission", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
