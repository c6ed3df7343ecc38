"""Gateway replicas behind HAProxy: calls/s and latency with 1, 2 and 3 replicas, against the
upstream called directly in the same run; calls lost and state kept when a replica is killed.

Everything runs on this machine, on loopback: a local Redis (conversations) and PostgreSQL
(catalog store), one upstream MCP server over streamable HTTP (``tests/adapters/mcp/servers/
counter_server.py``), N ``toolmgmt serve --http`` replicas with ``[store]``, and HAProxy
(``LocalHAProxy``, its packaged template). The clients (``mcp.Client``, one conversation each)
run in a process of their own, so their CPU is counted apart from the gateway's; the table gives
each process group's CPU time per call.

Phases, each with fresh replicas:

1. **one client in sequence** (the hop's own cost, no queueing): the upstream directly, one
   replica directly, one replica through HAProxy, and one replica that answers plain requests
   in their own task (``direct_answers = true``, ``toolmgmt_gateway.exchange``) against the
   default (every request through the SDK's stateless transport);
2. **50 clients at once**: the upstream directly, then 1, 2 and 3 replicas through HAProxy;
3. **a replica killed under load** (2 replicas, 50 clients): one replica gets SIGKILL a third of
   the way through. A call that fails is *interrupted* when it was in flight at the kill and
   failed because its connection or stream to the killed replica was lost (it may or may not
   have run: only its client may retry it), *lost* otherwise (``split_failures``); the upstream
   counts every run, so a call that ran twice shows; after the run every conversation must still
   hold its loaded tool and one result record per answered call (*state kept*).

Every call is ``execute_tool(counter_bump, {key})`` with a unique key (``bump`` directly): an
answer naming another key is *mixed*. Throughput on a shared machine depends on what else runs:
the ``others`` column is the cores other processes kept busy during each phase (``/proc/stat``
less this run's processes). Run: ``python bench/scaleout.py [--clients 50]
[--calls 20] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "adapters"))
sys.path.insert(0, str(ROOT / "tests"))  # support.*: the tests' upstream servers
sys.path.insert(0, str(ROOT / "bench"))  # _clients, _results

TOOL = "counter_bump"
SEQUENTIAL = 200
"""Calls of the one-client phases."""
DEADLINE = 900.0
"""Seconds one client process may take."""
_TICKS = os.sysconf("SC_CLK_TCK")
STREAM_LOST = (
    "SSE stream ended without a response",  # the replica died while its answer streamed
    "SSE stream failed",
    "Server returned an error response",  # HAProxy's 502 (not JSON-RPC): it died before answering
    "RemoteProtocolError",  # the connection dropped under the client
    "ReadError",
)
"""What an MCP client says of a call whose replica died under it: its connection or stream was
lost. The gateway's own failures are JSON-RPC errors with messages of their own."""


# -- the client process ----------------------------------------------------------------------


def worker(args: argparse.Namespace) -> None:
    """The load generator (run in its own process): prints one JSON result on stdout."""
    import anyio

    result = anyio.run(
        _load, args.url, args.clients, args.calls, args.direct, args.kill_after, args.redis
    )
    print(json.dumps(result))


async def _load(
    url: str, clients: int, calls: int, direct: bool, kill_after: int, redis_url: str | None
) -> dict[str, Any]:
    import anyio
    from _clients import together

    latencies: list[float] = []
    failures: list[dict[str, Any]] = []
    mixed = 0
    answered = 0
    started_calls = 0
    in_flight: dict[int, tuple[int, float]] = {}  # client -> (its call number, started)
    through: set[int] = set()  # clients whose calls are over
    crashed: list[dict[str, Any]] = []
    done = 0
    kill_asked = False

    async def calls_of(number: int, client: Any) -> None:
        nonlocal mixed, answered, started_calls, done, kill_asked
        for i in range(calls):
            key = f"c{number}-{i}-{os.urandom(6).hex()}"
            started = time.perf_counter()
            in_flight[number] = (i, started)
            started_calls += 1
            if kill_after and started_calls == kill_after and not kill_asked:
                kill_asked = True
                print("KILL", flush=True, file=sys.stderr)  # the parent kills a replica
            try:
                if direct:
                    reply = await client.call_tool("bump", {"key": key})
                else:
                    reply = await client.call_tool(
                        "execute_tool", {"tool_name": TOOL, "arguments": {"key": key}}
                    )
                text = reply.content[0].text if reply.content else ""
                value = json.loads(text) if not reply.is_error else None
            except Exception as exc:  # no answer: the call raised
                failures.append(
                    {
                        "started": started,
                        "ended": time.perf_counter(),
                        "error": repr(exc)[:300],
                        "raised": True,
                    }
                )
                continue
            if value is None:  # an answer, an error one
                failures.append(
                    {"started": started, "ended": time.perf_counter(), "error": text[:300]}
                )
            elif value.get("key") != key:
                mixed += 1
            else:
                answered += 1
                latencies.append(time.perf_counter() - started)
        in_flight.pop(number, None)
        through.add(number)
        finish_one()
        await checked.wait()  # conversations stay open (no DELETE) until their state is read

    def finish_one() -> None:
        nonlocal done
        done += 1
        if done == clients:  # the last one reads every conversation's state
            if redis_url:
                state.update(_stored_conversations(redis_url))
            checked.set()

    def client_crashed(number: int, exc: BaseException) -> None:
        """The SDK's client ended its whole session (a connection closed before any response,
        from HAProxy when the replica died holding the request unread): the call it had in
        flight failed, and it sends no more."""
        while getattr(exc, "exceptions", None):  # an exception group: its first leaf
            exc = exc.exceptions[0]  # type: ignore[attr-defined]
        error = repr(exc)
        if number in through:  # after its calls (closing): nothing lost, already counted done
            crashed.append({"client": number, "error": error[:300], "calls_not_sent": 0})
            return
        # Before its first call (connecting, loading its tool): none of them sent.
        call, started = in_flight.pop(number, (-1, 0.0))
        if call >= 0:
            failures.append(
                {
                    "started": started,
                    "ended": time.perf_counter(),
                    "error": error[:300],
                    "raised": True,
                }
            )
        crashed.append({"client": number, "error": error[:300], "calls_not_sent": calls - call - 1})
        finish_one()

    async def load_tool(client: Any) -> None:  # a conversation loads its tool, as a model would
        await client.call_tool("get_tool_schema", {"tool_name": TOOL})

    state: dict[str, Any] = {}
    checked = anyio.Event()
    if not redis_url:
        checked.set()
    began, cpu = time.perf_counter(), time.process_time()
    with anyio.fail_after(DEADLINE):
        await together(
            url, clients, calls_of, prepare=None if direct else load_tool, on_crash=client_crashed
        )
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    return {
        "cpu_self": cpu,  # the load only: not the interpreter's start and imports
        "latencies": latencies,
        "answered": answered,
        "mixed": mixed,
        "failures": failures,  # timed on CLOCK_MONOTONIC, which the parent's clock is too
        "wall": wall,
        "conversations": state,
        "crashed_clients": crashed,
    }


def _stored_conversations(redis_url: str) -> dict[str, Any]:
    """Each stored conversation's loaded tools and result records, summed up."""
    import redis

    with redis.Redis.from_url(redis_url) as client:
        states = [
            json.loads(client.hget(key, "s") or b"{}")
            for key in client.keys("toolmgmt:session:{mcp-*}")
        ]
    return {
        "count": len(states),
        "loaded_ok": sum(1 for s in states if s.get("loaded") == [TOOL]),
        "records": sum(len((s.get("results") or {}).get("records", [])) for s in states),
    }


# -- the rig -----------------------------------------------------------------------------------


def machine_busy_seconds() -> float:
    """CPU seconds every core of this machine has spent busy since boot (``/proc/stat``)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / _TICKS


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


class Rig:
    """The engines and the upstream, started once; replicas and HAProxy per phase."""

    def __init__(self, stack: ExitStack, folder: Path) -> None:
        from support.upstreams import COUNTER, http_upstream
        from toolmgmt_deploy import LocalPostgres, LocalRedis

        self.redis = stack.enter_context(LocalRedis())
        self.postgres = stack.enter_context(LocalPostgres())
        upstream = stack.enter_context(http_upstream(COUNTER))
        self.upstream, self.upstream_url = upstream.process, upstream.url
        self.config = folder / "gateway.toml"
        common = (
            f'[upstreams.counter]\nurl = "{self.upstream_url}"\ntimeout = 60\n\n'
            f'[store]\nsessions = "{self.redis.url}"\ncatalog = "{self.postgres.dsn}"\n'
        )
        self.config.write_text(common)
        self.direct_config = folder / "gateway-direct.toml"
        """Plain requests answered in their own task (``toolmgmt_gateway.exchange``), against the
        default (every request through the SDK's stateless transport)."""
        self.direct_config.write_text("[gateway]\ndirect_answers = true\n\n" + common)

    def processes(self) -> dict[str, list[int]]:
        return {"upstream": [self.upstream.pid], "redis": [self.redis.pid]}

    @contextmanager
    def replicas(self, count: int, config: Path | None = None) -> Iterator[tuple[list[Any], Any]]:
        """``count`` replicas (of ``config``, by default the usual one) behind a fresh
        HAProxy; (replicas, balancer)."""
        from concurrent.futures import ThreadPoolExecutor

        from toolmgmt_deploy import LocalHAProxy
        from toolmgmt_deploy.replica import LocalGateway

        replicas = [LocalGateway(config or self.config) for _ in range(count)]
        balancer = None
        try:
            with ThreadPoolExecutor(count) as pool:
                list(pool.map(LocalGateway.start, replicas))
            balancer = LocalHAProxy([r.address for r in replicas]).start()
            deadline = time.monotonic() + 30
            while not all(s.startswith("UP") for s in balancer.server_states().values()):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"replicas not up: {balancer.server_states()}")
                time.sleep(0.1)
            yield replicas, balancer
        finally:
            if balancer is not None:
                balancer.close()
            for replica in replicas:
                replica.stop()


def run_clients(
    url: str,
    clients: int,
    calls: int,
    *,
    direct: bool,
    watch: dict[str, list[int]],
    kill: Any = None,
    kill_after: int = 0,
    redis_url: str | None = None,
) -> dict[str, Any]:
    """One client process against ``url``; its results and each group's CPU seconds."""
    command = [sys.executable, __file__, "--worker", "--url", url, "--clients", str(clients)]
    command += ["--calls", str(calls), "--kill-after", str(kill_after)]
    if direct:
        command.append("--direct")
    if redis_url:
        command += ["--redis", redis_url]
    pids = {p for group in watch.values() for p in group}
    before = {p: cpu_seconds(p) for p in pids}
    busy_before, started = machine_busy_seconds(), time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak: dict[int, float] = {}
    killed: list[tuple[float, float]] = []
    errors: list[str] = []

    def read_stderr() -> None:  # drained all along: a full pipe would stall the clients
        assert process.stderr is not None
        for line in process.stderr:
            errors.append(line)
            if line.startswith("KILL") and kill is not None and not killed:
                peak.update({p: cpu_seconds(p) for p in pids})  # the victim's, before it dies
                began = time.perf_counter()  # CLOCK_MONOTONIC: the worker's clock too
                kill()  # SIGKILL, then waits for the replica to be gone
                killed.append((began, time.perf_counter()))

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert process.stdout is not None
    out = process.stdout.read()
    process.wait(DEADLINE)
    reader.join(10)
    err = "".join(errors)
    if process.returncode != 0:
        raise RuntimeError(f"the client process failed:\n{err[-3000:]}")
    result = json.loads(out)
    result["interrupted"], result["lost"] = split_failures(
        result["failures"], killed[0] if killed else None
    )
    used = {p: max(cpu_seconds(p), peak.get(p, 0.0)) - before[p] for p in pids}
    result["cpu"] = {g: round(sum(used[p] for p in group), 2) for g, group in watch.items()}
    result["cpu"]["clients"] = round(result["cpu_self"], 2)
    # What else kept the cores busy meanwhile (other jobs on a shared machine), in cores.
    wall = time.perf_counter() - started
    ours = sum(used.values()) + result["cpu_self"]
    result["other_cores"] = round(max(machine_busy_seconds() - busy_before - ours, 0) / wall, 2)
    return result


def split_failures(
    failures: list[dict[str, Any]], kill: tuple[float, float] | None
) -> tuple[int, int]:
    """(interrupted, lost) among failed calls.

    *Interrupted*: in flight when the replica was killed (started before it was gone, ended
    after the kill began) and raised because its connection or stream was lost
    (:data:`STREAM_LOST`): it was on the killed replica and may or may not have run. *Lost*:
    any other failure (an error answer, a timeout, a call started after the kill), which a
    replica going away must not cause.

    Args:
        failures: the client process's failed calls (``started``, ``ended``, ``error``, and
            ``raised`` when there was no answer at all).
        kill: when the kill began and when the replica was gone (None: no kill).
    """
    if kill is None:
        return 0, len(failures)
    began, gone = kill
    interrupted = sum(
        1
        for failure in failures
        if failure.get("raised")
        and failure["started"] <= gone
        and failure["ended"] >= began
        and any(mark in failure["error"] for mark in STREAM_LOST)
    )
    return interrupted, len(failures) - interrupted


# -- where a replica's time goes ----------------------------------------------------------------

LAYERS = [
    ("toolmgmt_core/", "toolmgmt core (session, budget, state)"),
    ("toolmgmt_gateway/", "toolmgmt gateway (middleware, handlers)"),
    ("toolmgmt_mcp/", "toolmgmt gateway (middleware, handlers)"),  # the MCP adapter: upstreams
    ("redis/", "Redis client"),
    ("mcp/client/", "MCP SDK client (to the upstream)"),
    ("mcp/server/", "MCP SDK server (to the client)"),
    ("sse_starlette/", "MCP SDK server (to the client)"),
    ("mcp/shared/", "MCP SDK (shared: dispatcher, streams)"),
    ("mcp_types/", "MCP SDK (shared: dispatcher, streams)"),
    ("pydantic", "pydantic (MCP messages)"),
    ("httpx2/", "HTTP client (httpx, httpcore, h11)"),
    ("httpcore2/", "HTTP client (httpx, httpcore, h11)"),
    ("h11/", "HTTP client (httpx, httpcore, h11)"),
    ("uvicorn/", "HTTP server (uvicorn, starlette)"),
    ("starlette/", "HTTP server (uvicorn, starlette)"),
    ("json/", "json"),
    ("concurrent/", "threads (store calls off the loop)"),
    ("threading.py", "threads (store calls off the loop)"),
    ("queue.py", "threads (store calls off the loop)"),
    ("anyio/", "event loop (asyncio, anyio)"),
    ("asyncio/", "event loop (asyncio, anyio)"),
]
LEGS = [  # frames that run no other leg's code inline (a middleware's __call__ would)
    ("_Upstream.call", "calling the upstream (MCP client)"),
    ("StreamableHTTPTransport.", "calling the upstream (MCP client)"),
    ("ToolSession.save", "conversation state (restore, save, Redis)"),
    ("ToolSession.restore", "conversation state (restore, save, Redis)"),
    ("ConversationMiddleware._run", "conversation state (restore, save, Redis)"),
    ("RedisSessionStore", "conversation state (restore, save, Redis)"),
    ("_worker (concurrent", "conversation state (restore, save, Redis)"),  # store calls
]


def profile_replica(rig: Rig, clients: int, calls: int, out: Path) -> dict[str, Any]:
    """py-spy on one replica (behind HAProxy) under load: the share of its samples by layer
    (the innermost frame of a known library) and by leg of the call."""
    with rig.replicas(1) as (replicas, balancer):
        pid = replicas[0].process.pid
        watch = {**rig.processes(), "replicas": [pid], "haproxy": [balancer.pid]}
        run_clients(balancer.url + "/mcp", 2, 5, direct=False, watch=watch)  # warm up
        spy = subprocess.Popen(
            [
                "py-spy",
                "record",
                "-p",
                str(pid),
                "-o",
                str(out),
                "--format",
                "raw",
                "-r",
                "250",
                "--gil",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # attached
        result = run_clients(balancer.url + "/mcp", clients, calls, direct=False, watch=watch)
        spy.send_signal(signal.SIGINT)
        spy.wait(60)
    layers: dict[str, int] = {}
    legs: dict[str, int] = {}
    total = 0
    for line in out.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        total += int(count)
        layer = next(
            (name for frame in reversed(frames) for key, name in LAYERS if key in frame), "other"
        )
        layers[layer] = layers.get(layer, 0) + int(count)
        leg = next(
            (name for key, name in LEGS if any(key in frame for frame in frames)),
            "serving the client (MCP server, HTTP)",
        )
        legs[leg] = legs.get(leg, 0) + int(count)

    def shares(counts: dict[str, int]) -> dict[str, float]:
        ordered = sorted(counts.items(), key=lambda kv: -kv[1])
        return {name: round(100 * n / total, 1) for name, n in ordered} if total else {}

    per_call = summary("profiled: 1 replica", result, clients * calls)["cpu_ms_per_call"]
    return {
        "samples": total,
        "replica_cpu_ms_per_call": per_call.get("replicas"),
        "by_layer_percent": shares(layers),
        "by_leg_percent": shares(legs),
    }


# -- figures -----------------------------------------------------------------------------------


def summary(name: str, result: dict[str, Any], calls: int) -> dict[str, Any]:
    data = sorted(result["latencies"])
    answered = len(data)

    def pct(share: float) -> float:
        return round(data[min(len(data) - 1, int(round(share * (len(data) - 1))))] * 1000, 2)

    figures = {
        "path": name,
        "calls": calls,
        "answered": answered,
        "lost": result["lost"],
        "interrupted": result["interrupted"],
        "mixed": result["mixed"],
        "calls_per_s": round(answered / result["wall"], 1) if result["wall"] else 0.0,
        "p50_ms": pct(0.5) if data else None,
        "p95_ms": pct(0.95) if data else None,
        "mean_ms": round(statistics.mean(data) * 1000, 2) if data else None,
        "cpu_s": result.get("cpu", {}),
        "other_jobs_cores": result.get("other_cores"),
        "cpu_ms_per_call": {
            g: round(1000 * s / answered, 2) for g, s in result.get("cpu", {}).items() if answered
        },
    }
    if result["failures"]:
        figures["first_failures"] = [f["error"] for f in result["failures"][:3]]
    crashed = result.get("crashed_clients") or []
    figures["clients_crashed"] = len(crashed)
    figures["calls_not_sent"] = sum(c["calls_not_sent"] for c in crashed)
    if crashed:
        figures["first_crashes"] = [c["error"] for c in crashed[:3]]
    return figures


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    header = (
        f"{'path':<26}{'calls':>6}{'ok':>6}{'lost':>5}{'intr':>5}{'calls/s':>9}"
        f"{'p50 ms':>8}{'p95 ms':>8}{'others':>7}   CPU ms per call"
    )
    print(header)
    print("-" * (len(header) + 40))
    for row in rows:
        cpu = ", ".join(f"{g} {v:g}" for g, v in row["cpu_ms_per_call"].items())
        print(
            f"{row['path']:<26}{row['calls']:>6}{row['answered']:>6}{row['lost']:>5}"
            f"{row['interrupted']:>5}{row['calls_per_s']:>9}{row['p50_ms']!s:>8}"
            f"{row['p95_ms']!s:>8}{row['other_jobs_cores']!s:>7}   {cpu}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20, help="calls per client")
    parser.add_argument("--max-replicas", type=int, default=3)
    parser.add_argument("--json", help="write the figures here (bench/_results.py)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile one replica under load with py-spy (pip install py-spy)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--direct", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kill-after", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--redis", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0

    clients, calls = args.clients, args.calls
    total = clients * calls
    figures: dict[str, Any] = {"clients": clients, "calls_per_client": calls}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        rig = Rig(stack, Path(folder))
        base = rig.processes()
        print(f"{clients} clients x {calls} calls; upstream {rig.upstream_url}", flush=True)

        # 1. One client in sequence: the hop's own cost.
        alone = [
            summary(
                "upstream directly",
                run_clients(rig.upstream_url, 1, SEQUENTIAL, direct=True, watch=base),
                SEQUENTIAL,
            )
        ]
        with rig.replicas(1) as (replicas, balancer):
            watch = {
                **base,
                "replicas": [r.process.pid for r in replicas],
                "haproxy": [balancer.pid],
            }
            run_clients(balancer.url + "/mcp", 2, 5, direct=False, watch=watch)  # warm up
            alone.append(
                summary(
                    "1 replica, no HAProxy",
                    run_clients(replicas[0].url, 1, SEQUENTIAL, direct=False, watch=watch),
                    SEQUENTIAL,
                )
            )
            alone.append(
                summary(
                    "1 replica via HAProxy",
                    run_clients(balancer.url + "/mcp", 1, SEQUENTIAL, direct=False, watch=watch),
                    SEQUENTIAL,
                )
            )
        with rig.replicas(1, rig.direct_config) as (replicas, balancer):
            watch = {**base, "replicas": [r.process.pid for r in replicas]}
            run_clients(replicas[0].url, 2, 5, direct=False, watch=watch)  # warm up
            alone.append(
                summary(
                    "1 replica, no HAProxy, direct answers",
                    run_clients(replicas[0].url, 1, SEQUENTIAL, direct=False, watch=watch),
                    SEQUENTIAL,
                )
            )
        print_table("one client, calls in sequence", alone)

        # 2. 50 clients at once.
        loaded = [
            summary(
                "upstream directly",
                run_clients(rig.upstream_url, clients, calls, direct=True, watch=base),
                total,
            )
        ]
        for count in range(1, args.max_replicas + 1):
            with rig.replicas(count) as (replicas, balancer):
                watch = {
                    **base,
                    "replicas": [r.process.pid for r in replicas],
                    "haproxy": [balancer.pid],
                }
                run_clients(balancer.url + "/mcp", 2, 5, direct=False, watch=watch)  # warm up
                result = run_clients(
                    balancer.url + "/mcp", clients, calls, direct=False, watch=watch
                )
                loaded.append(
                    summary(f"{count} replica{'s' if count > 1 else ''} via HAProxy", result, total)
                )

        print_table(f"{clients} clients at once", loaded)

        # 3. A replica killed under load.
        with rig.replicas(2) as (replicas, balancer):
            watch = {
                **base,
                "replicas": [r.process.pid for r in replicas],
                "haproxy": [balancer.pid],
            }
            victim = replicas[0]
            result = run_clients(
                balancer.url + "/mcp",
                clients,
                calls,
                direct=False,
                watch=watch,
                kill=victim.kill,
                kill_after=total // 3,
                redis_url=rig.redis.url,
            )
            killed = summary("2 replicas, one killed", result, total)
            kept = result["conversations"]
            answered = killed["answered"]
            killed["state_kept"] = bool(
                kept.get("count") == clients
                and kept.get("loaded_ok") == clients
                and answered <= kept.get("records", -1) <= answered + killed["interrupted"]
            )
            killed["conversations"] = kept
            killed["duplicated"] = _repeated(rig.upstream_url)
        print_table("a replica killed under load (SIGKILL)", [killed])
        print(
            f"  clients whose SDK session ended: {killed['clients_crashed']} "
            f"({killed['calls_not_sent']} calls not sent)\n"
            f"  state kept: {killed['state_kept']} ({kept}); calls that ran twice upstream: "
            f"{len(killed['duplicated'])}"
        )

        if args.profile:
            profile = profile_replica(rig, clients, calls, Path(folder) / "profile.txt")
            figures["profile"] = profile
            print(f"\nwhere one replica's time goes ({profile['samples']} samples):")
            for key in ("by_leg_percent", "by_layer_percent"):
                for name, share in profile[key].items():
                    print(f"  {share:5.1f}%  {name}")
                print()

    direct_p50 = alone[0]["p50_ms"]
    figures["sequential"] = alone
    figures["concurrent"] = loaded
    figures["killed"] = killed
    one = loaded[1]["calls_per_s"]
    figures["goals"] = {
        "added_p50_ms_one_client": round(alone[2]["p50_ms"] - direct_p50, 2),
        "added_p50_ms_one_client_no_haproxy": round(alone[1]["p50_ms"] - direct_p50, 2),
        "added_p50_ms_one_client_direct_answers": round(alone[3]["p50_ms"] - direct_p50, 2),
        **{
            f"speedup_{n}_vs_1": round(loaded[n]["calls_per_s"] / one, 2)
            if one and len(loaded) > n
            else None
            for n in (2, 3)
        },
        "lost": sum(r["lost"] for r in loaded) + killed["lost"],
        "state_kept": killed["state_kept"],
    }
    print("\ngoals:", json.dumps(figures["goals"]))
    if args.json:
        from _results import write_results

        print(f"wrote {write_results(args.json, 'scaleout', figures)}")
    return 0


def _repeated(upstream_url: str) -> list[str]:
    import anyio
    from mcp import Client

    async def tally() -> list[str]:
        async with Client(upstream_url) as client:
            reply = await client.call_tool("tally", {})
            return list(json.loads(reply.content[0].text)["repeated"])

    return anyio.run(tally)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
