"""Each client's fair share of a replica (issue 32, finding 10): under one client's flood,
at most its share of the work is worked on at once (the rest waits for its own, never for
another client's), a request waiting on its upstream gives its place back, a request that waits
a whole ``Retry-After`` is refused with 503, and each client holds at most its share of the
standalone streams. ``bench/admission.py`` measures the effect end to end (another client's
p50 under a 500-session flood against alone)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from toolmgmt_gateway import parse_config  # noqa: E402
from toolmgmt_gateway.admission import (  # noqa: E402
    TURN_SCOPE_KEY,
    Admission,
    session_shares,
    waiting_on_upstream,
    work_shares,
)
from toolmgmt_gateway.clients import CLIENT_SCOPE_KEY  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class _Replica:
    """An ASGI app standing for the gateway: each request works, waits on its upstream, works
    again; it counts how many of each client's requests are at each stage at once."""

    def __init__(self, work: float = 0.05, upstream: float = 0.3) -> None:
        self.work, self.upstream = work, upstream
        self.working: Counter[str] = Counter()
        self.peak_working: Counter[str] = Counter()
        self.waiting: Counter[str] = Counter()
        self.peak_waiting: Counter[str] = Counter()

    async def _stage(self, client: str, seconds: float) -> None:
        self.working[client] += 1
        self.peak_working[client] = max(self.peak_working[client], self.working[client])
        await anyio.sleep(seconds)
        self.working[client] -= 1

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        client = scope[CLIENT_SCOPE_KEY]
        await self._stage(client, self.work)
        async with waiting_on_upstream(scope.get(TURN_SCOPE_KEY)):
            self.waiting[client] += 1
            self.peak_waiting[client] = max(self.peak_waiting[client], self.waiting[client])
            await anyio.sleep(self.upstream)
            self.waiting[client] -= 1
        await self._stage(client, self.work)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _request(app: Any, client: str, method: str = "POST") -> tuple[int, dict[str, str], str]:
    scope = {"type": "http", "path": "/mcp", "method": method, CLIENT_SCOPE_KEY: client}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app(scope, receive, send)
    start = next(e for e in sent if e["type"] == "http.response.start")
    headers = {k.decode(): v.decode() for k, v in start.get("headers", [])}
    body = b"".join(e.get("body", b"") for e in sent if e["type"] == "http.response.body")
    return start["status"], headers, body.decode()


async def _flood_then_one(app: Any, flood: int, after: float) -> list[int]:
    """``flood`` requests of ``bulk`` at once, then, ``after`` seconds later, one of
    ``interactive``: their statuses."""
    statuses: list[int] = []

    async def one(client: str) -> None:
        statuses.append((await _request(app, client))[0])

    async with anyio.create_task_group() as tasks:
        for _ in range(flood):
            tasks.start_soon(one, "bulk")
        await anyio.sleep(after)
        tasks.start_soon(one, "interactive")
    return statuses


async def test_a_flood_is_held_to_its_share_of_the_work_and_upstream_waits_do_not_count() -> None:
    replica = _Replica()
    app = Admission(replica, max_requests=0, retry_after=10, work={"bulk": 2, "interactive": 2})
    statuses = await _flood_then_one(app, 30, 0.02)
    assert statuses == [200] * 31  # the flood waited for its own turns; nothing was refused
    assert replica.peak_working["bulk"] == 2  # never more of its work at once than its share
    assert replica.peak_waiting["bulk"] > 2  # waiting on the upstream, its place was given back
    assert replica.peak_working["interactive"] == 1


async def test_a_flood_works_one_request_at_a_time_beside_another_clients() -> None:
    # The flood's share of the work was 2 at all times: on a host short of CPU its next
    # request started beside another client's and took the replica's time from it.
    durations = {"bulk": 0.02, "interactive": 0.3}
    events: list[tuple[str, str]] = []

    async def replica(scope: Any, receive: Any, send: Any) -> None:
        client = scope[CLIENT_SCOPE_KEY]
        events.append(("start", client))
        await anyio.sleep(durations[client])
        events.append(("end", client))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    app = Admission(replica, max_requests=0, retry_after=10, work={"bulk": 2, "interactive": 2})
    assert await _flood_then_one(app, 40, 0.05) == [200] * 41
    running, peak_alone, peak_beside = 0, 0, 0  # bulk's requests worked on at once
    beside = False  # while interactive's request is being worked on
    for kind, client in events:
        if client == "interactive":
            beside = kind == "start"
            continue
        running += 1 if kind == "start" else -1
        if kind == "start" and beside:
            peak_beside = max(peak_beside, running)
        elif kind == "start":
            peak_alone = max(peak_alone, running)
    assert peak_alone == 2  # alone, the flood had its whole share of the work
    assert peak_beside == 1  # beside another client's request, one at a time


async def test_a_request_that_waits_a_whole_retry_after_for_its_own_is_refused() -> None:
    replica = _Replica(work=3.0, upstream=0.0)
    app = Admission(replica, max_requests=0, retry_after=1, work={"bulk": 1, "other": 1})
    results: dict[str, Any] = {}

    async def one(key: str, client: str) -> None:
        results[key] = await _request(app, client)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one, "first", "bulk")
        await anyio.sleep(0.1)
        tasks.start_soon(one, "second", "bulk")
        tasks.start_soon(one, "other", "other")  # never waits for bulk's work
    status, headers, body = results["second"]
    assert status == 503 and headers["retry-after"] == "1"
    assert "client 'bulk' kept its share of this replica's work (1 requests" in body
    assert results["first"][0] == 200 and results["other"][0] == 200


async def test_a_call_that_outlives_its_request_never_takes_its_place_again() -> None:
    """The place travels with the call (the scope, then the call's relay): a call still
    waiting on its upstream when its request ended does not take a place back after."""
    limiter: list[anyio.CapacityLimiter] = []
    upstream_answered = anyio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        turn = scope[TURN_SCOPE_KEY]
        limiter.append(turn.limiter)

        async def outliving_call() -> None:
            async with waiting_on_upstream(turn):
                await upstream_answered.wait()

        tasks.start_soon(outliving_call)
        await anyio.sleep(0.05)  # the call is waiting on its upstream: its place is free
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    admission = Admission(app, max_requests=0, retry_after=10, work={"bulk": 2, "other": 2})
    async with anyio.create_task_group() as tasks:
        status, _, _ = await _request(admission, "bulk")
        assert status == 200
        upstream_answered.set()  # after its request ended
    assert limiter[0].borrowed_tokens == 0


async def test_each_client_holds_at_most_its_share_of_the_streams() -> None:
    opened = anyio.Event()
    release = anyio.Event()

    async def streams(scope: Any, receive: Any, send: Any) -> None:
        opened.set()
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = Admission(streams, max_requests=0, retry_after=2, sessions={"bulk": 1, "other": 1})
    results: dict[str, Any] = {}

    async def one(key: str, client: str) -> None:
        results[key] = await _request(app, client, "GET")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one, "first", "bulk")
        await opened.wait()
        await one("second", "bulk")
        tasks.start_soon(one, "other", "other")
        await anyio.sleep(0.05)
        release.set()
    assert (
        results["second"][0] == 503
        and "its share of this replica's sessions" in results["second"][2]
    )
    assert results["first"][0] == 200 and results["other"][0] == 200


def test_the_default_shares_split_a_replica_between_its_clients(monkeypatch: Any) -> None:
    for name in ("A", "B"):
        monkeypatch.setenv(f"FAIR_{name}", f"token-{name}-0123456789abcdef")
    text = (
        "[gateway]\nmax_requests = 128\nmax_sessions = 1000\n"
        '[gateway.clients.a]\ntoken_env = "FAIR_A"\n'
        '[gateway.clients.b]\ntoken_env = "FAIR_B"\nmax_active = 8\nmax_sessions = 10\n'
        '[upstreams.n]\nurl = "http://127.0.0.1:1/mcp"\n'
    )
    settings = parse_config(text).gateway
    assert work_shares(settings) == {"a": 4, "b": 8}  # 128 // 32
    assert session_shares(settings) == {"a": 500, "b": 10}
    unlimited = parse_config(text.replace("max_requests = 128", "max_requests = 0")).gateway
    assert work_shares(unlimited) == {"b": 8}  # max_requests = 0: no default share


async def test_a_listening_replica_keeps_what_it_built_out_of_the_full_collections() -> None:
    # Under a flood, a full collection over the ~125,000 objects a replica builds at start
    # stopped every request for 250-670 ms on a loaded host; frozen, they are not walked.
    import gc

    import uvicorn
    from toolmgmt_gateway.lifecycle import draining_server

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})

    gc.unfreeze()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, log_level="warning")
    server = draining_server(config, lambda sig: None)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.01)
            frozen = gc.get_freeze_count()
            server.should_exit = True
    finally:
        gc.unfreeze()
    assert frozen > 10_000  # the test process's modules, at least
