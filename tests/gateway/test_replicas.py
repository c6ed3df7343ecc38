"""End to end: two gateway replicas (``toolmgmt serve --http``) behind a real HAProxy, sharing a
real Redis (conversations) and a real PostgreSQL (the catalog).

- a tool pushed with ``toolmgmt catalog push`` becomes searchable on both replicas, without a
  restart, and one removed with ``toolmgmt catalog remove`` leaves search on both;
- an MCP client's conversation survives the SIGKILL of the replica serving its call, over
  either protocol: the call in flight fails and is not replayed (its upstream tool ran exactly
  once), the next call succeeds on the other replica with the same client (no re-initialize),
  and the conversation keeps its loaded tools and its spent result budget (a 2025 client's
  conversation; a 2026 caller's, keyed by its credentials).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("redis")
pytest.importorskip("psycopg")

import anyio  # noqa: E402
import httpx2  # noqa: E402
import psycopg  # noqa: E402
import redis  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from support.upstreams import COUNTER, http_upstream  # noqa: E402
from toolmgmt_deploy import LocalHAProxy  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402
from toolmgmt_gateway.conversations import principal_key  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

WORDS = 240
"""Padding words of a ``bump`` answer: about 250 tokens, under one result's budget (300)."""
GENEROUS = 30.0
"""Seconds within which anything here must happen (a does-not-hang bound, not a speed goal)."""


def _wait(condition: Any, what: str, timeout: float = GENEROUS) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout:g}s")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def topology(
    redis_server: Any, postgres_server: Any, haproxy_binary: str, tmp_path_factory: Any
) -> Iterator[SimpleNamespace]:
    """Redis, PostgreSQL, a counting upstream, two replicas (a restart keeps its port), HAProxy."""
    folder = tmp_path_factory.mktemp("replicas")
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('toolmgmt_tools')").fetchone()[0]:
            conn.execute("TRUNCATE toolmgmt_tools")
    with http_upstream(COUNTER) as upstream:
        config = folder / "gateway.toml"
        config.write_text(
            "[gateway]\n"
            "max_result_tokens = 300\n"
            "session_result_budget = 400\n\n"
            "[upstreams.counter]\n"
            f'url = "{upstream.url}"\n'
            "timeout = 30\n\n"
            "[store]\n"
            f'sessions = "{redis_server.url}"\n'
            "session_ttl = 600\n"
            f'catalog = "{postgres_server.dsn}"\n'
        )
        replicas = [LocalGateway(config) for _ in range(2)]
        balancer: LocalHAProxy | None = None
        try:
            with ThreadPoolExecutor(2) as pool:  # both replicas start at once
                list(pool.map(LocalGateway.start, replicas))
            balancer = LocalHAProxy([r.address for r in replicas], binary=haproxy_binary).start()
            _wait(lambda: _all_up(balancer, 2), "HAProxy sees both replicas up")
            yield SimpleNamespace(
                replicas=replicas,
                balancer=balancer,
                url=f"{balancer.url}/mcp",
                redis_url=redis_server.url,
                dsn=postgres_server.dsn,
                upstream=upstream.url,
            )
        finally:
            if balancer is not None:
                balancer.close()
            for replica in replicas:
                replica.stop()


def _all_up(balancer: LocalHAProxy, count: int) -> bool:
    states = balancer.server_states()
    return len(states) == count and all(s.startswith("UP") for s in states.values())


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    try:
        return bool(result.is_error), json.loads(text)
    except ValueError:
        return bool(result.is_error), text


async def _bump(client: Client, key: str) -> tuple[bool, Any]:
    arguments = {"key": key, "words": WORDS}
    return await _call(
        client, "execute_tool", {"tool_name": "counter_bump", "arguments": arguments}
    )


def _conversations(redis_url: str) -> dict[str, dict[str, Any]]:
    """Every conversation's stored state, by store key."""
    with redis.Redis.from_url(redis_url) as client:
        keys = [k for k in client.keys("toolmgmt:session:{mcp-*}")]
        return {k.decode(): json.loads(client.hget(k, "s")) for k in keys}


async def _runs(upstream: str, key: str) -> int:
    async with Client(upstream) as direct:
        result = await direct.call_tool("runs", {"key": key})
        return int(result.content[0].text)  # type: ignore[union-attr]


def _catalog_command(dsn: str, *args: str) -> None:
    subprocess.run(
        ["toolmgmt", "catalog", *args, "--store", dsn], check=True, capture_output=True, timeout=60
    )


async def _until_on_both(
    topology: SimpleNamespace, query: str, holds: Any, what: str
) -> dict[str, float]:
    """Search ``query`` on each replica until ``holds(found tools)`` on both (a generous bound:
    how fast is bench/stores.py's figure); the seconds each took."""
    started = time.monotonic()
    seen: dict[str, float] = {}
    async with (
        Client(topology.replicas[0].url) as first,
        Client(topology.replicas[1].url) as second,
    ):
        with anyio.fail_after(GENEROUS):
            while len(seen) < 2:
                for name, client in (("first", first), ("second", second)):
                    if name in seen:
                        continue
                    _, found = await _call(client, "discover_tools", {"query": query})
                    if holds(found.get("tools", {})):
                        seen[name] = time.monotonic() - started
                await anyio.sleep(0.05)
    print(f"{what} on both replicas after: {seen}")
    return seen


async def test_a_pushed_tool_is_searchable_on_both_replicas(
    topology: SimpleNamespace, tmp_path: Path
) -> None:
    tools = tmp_path / "tools.json"
    # A curated definition of the upstream's own ``runs`` (new words to find it by), and a
    # tool of a domain no upstream serves (skipped: nothing could run it).
    curated = {
        "name": "counter_runs",
        "description": "Tally ledger: how many times a zebra counter key was bumped.",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
        "domain": "counter",
        "keywords": ["zebra", "ledger"],
        "annotations": {"readOnlyHint": True},
    }
    orphan = {**curated, "name": "nowhere_zebra", "domain": "nowhere"}
    tools.write_text(json.dumps([curated, orphan]))
    _catalog_command(topology.dsn, "push", str(tools))
    await _until_on_both(
        topology,
        "zebra ledger",
        lambda found: "counter_runs" in found and "nowhere_zebra" not in found,
        "pushed tool searchable",
    )
    # The curated definition runs on the upstream, through either replica.
    for replica in topology.replicas:
        async with Client(replica.url) as client:
            error, value = await _call(
                client, "execute_tool", {"tool_name": "counter_runs", "arguments": {"key": "z"}}
            )
            assert (error, value) == (False, 0)
    assert any("nowhere" in line for line in topology.replicas[0].log)  # said why it was skipped


async def test_a_tool_removed_from_the_store_leaves_search_on_both_replicas(
    topology: SimpleNamespace, tmp_path: Path
) -> None:
    # A tool only the store has (its upstream does not list it): once removed from the store,
    # nothing else brings it back.
    audit = {
        "name": "counter_quokka_audit",
        "description": "Audit the quokka ledger of every counter key.",
        "parameters": {"type": "object", "properties": {}},
        "domain": "counter",
        "keywords": ["quokka"],
    }
    tools = tmp_path / "audit.json"
    tools.write_text(json.dumps([audit]))
    _catalog_command(topology.dsn, "push", str(tools))
    await _until_on_both(
        topology, "quokka audit", lambda found: audit["name"] in found, "pushed tool searchable"
    )
    _catalog_command(topology.dsn, "remove", audit["name"])
    await _until_on_both(
        topology, "quokka audit", lambda found: audit["name"] not in found, "removed tool gone"
    )
    async with Client(topology.url) as client:  # nor can it be run any more
        error, answer = await _call(
            client, "execute_tool", {"tool_name": audit["name"], "arguments": {}}
        )
        assert error and audit["name"] in json.dumps(answer)


@pytest.mark.parametrize("protocol", ["2025", "2026"])
async def test_a_conversation_survives_the_death_of_its_replica(
    topology: SimpleNamespace, protocol: str
) -> None:
    """A 2025 client keeps the conversation the gateway issued it an id for; a 2026 client, which
    has no session, keeps its caller's (its Authorization header's) result budget."""
    t = topology
    k, in_flight = f"k-{protocol}", f"in-flight-{protocol}"
    async with _client(t.url, protocol, "Bearer kill-test") as client:
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        assert modern == (protocol == "2026")
        error, found = await _call(client, "discover_tools", {"query": "bump a counter key"})
        assert not error and "counter_bump" in found["tools"]
        error, schema = await _call(client, "get_tool_schema", {"tool_name": "counter_bump"})
        assert not error and schema["name"] == "counter_bump"
        error, first = await _bump(client, k)
        assert not error and first["runs"] == 1 and len(first["padding"].split()) == WORDS
        error, second = await _bump(client, k)  # over what is left of the budget: cut
        assert not error and second["runs"] == 2
        before = _conversation(t.redis_url, modern)
        assert before["loaded"] == ["counter_bump"] and len(before["results"]["records"]) == 2

        # A call in flight on the replica that dies: it fails, and nothing replays it.
        outcome: dict[str, Any] = {}

        async def slow_call() -> None:
            arguments = {"key": in_flight, "delay": 3}
            try:
                outcome["result"] = await client.call_tool(
                    "execute_tool", {"tool_name": "counter_slow_bump", "arguments": arguments}
                )
            except MCPError as exc:
                outcome["error"] = exc

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(slow_call)
            with anyio.fail_after(GENEROUS):  # it reached the upstream, which ran it
                while await _runs(t.upstream, in_flight) == 0:
                    await anyio.sleep(0.05)
            busy = await anyio.to_thread.run_sync(
                lambda: _wait(t.balancer.busy_servers, "HAProxy shows the call in flight")
            )
            victim = t.replicas[int(busy[0].removeprefix("gw")) - 1]
            survivor = t.replicas[1 - t.replicas.index(victim)]
            victim.kill()
        assert "error" in outcome, outcome  # the response ended without an answer
        print(f"{protocol}: in flight at the kill: {outcome['error']!r}")

        # The next call, on the same client, succeeds on the surviving replica.
        with anyio.fail_after(GENEROUS):
            error, third = await _bump(client, k)
        assert not error and third["runs"] == 3  # each bump ran exactly once
        # The spent budget came along: the same answer is cut now, but whole in a new
        # conversation (below).
        cut = len(third["padding"].split()) if isinstance(third, dict) else 0
        assert cut < WORDS, third
        after = _conversation(t.redis_url, modern)  # still one conversation: no re-init
        assert after["loaded"] == ["counter_bump"] and len(after["results"]["records"]) == 3
        assert after["results"]["records"][:2] == before["results"]["records"]

        await anyio.sleep(3.5)  # the in-flight call is over upstream: was it run again?
        assert await _runs(t.upstream, in_flight) == 1
        assert await _runs(t.upstream, k) == 3

    # A new conversation: a new 2025 client, or (2026) another caller.
    async with _client(t.url, protocol, "Bearer someone-else") as fresh:
        error, whole = await _bump(fresh, f"control-{protocol}")
        assert not error and len(whole["padding"].split()) == WORDS

    await anyio.to_thread.run_sync(
        lambda: _wait(
            lambda: t.balancer.server_states().get(f"gw{t.replicas.index(victim) + 1}") == "DOWN",
            "HAProxy marks the killed replica down",
        )
    )
    assert survivor.running
    # The replica comes back on its port and rejoins (for any later test).
    victim.start()
    await anyio.to_thread.run_sync(lambda: _wait(lambda: _all_up(t.balancer, 2), "it rejoins"))


def _client(url: str, protocol: str, authorization: str) -> Client:
    """A client of ``protocol`` (2025: the handshake; 2026: what a default client speaks)
    sending ``authorization``."""
    http = httpx2.AsyncClient(headers={"Authorization": authorization})
    transport = streamable_http_client(url, http_client=http)
    return Client(transport, mode="legacy" if protocol == "2025" else "auto")


def _conversation(redis_url: str, modern: bool) -> dict[str, Any]:
    """The one conversation of the kill test's caller: its 2026 one (keyed by its credentials),
    or the one 2025 conversation open."""
    mine = "toolmgmt:session:{" + principal_key("Bearer kill-test") + "}"
    conversations = _conversations(redis_url)
    if modern:
        return conversations[mine]
    (state,) = (v for key, v in conversations.items() if "{mcp-p-" not in key)
    return state
