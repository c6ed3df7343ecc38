"""The gateway's conversations in a real Redis (``[store] sessions``): ids minted by the gateway
and checked on every request, the SDK's answers for unknown ones, the 2026 protocol served per
request beside them (with each caller's result budget kept), and what a client sees when Redis
is down or was restarted."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("redis")

import anyio  # noqa: E402
import httpx2  # noqa: E402
import redis  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402
from support.mcp_http import ACCEPT, INITIALIZE, LIST, serving, store_config  # noqa: E402
from toolmgmt_deploy import LocalRedis  # noqa: E402
from toolmgmt_gateway import Gateway  # noqa: E402
from toolmgmt_gateway.conversations import conversation_key, principal_key  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

MODERN = "2026-07-28"
META = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}


async def test_ids_are_minted_bound_to_the_caller_and_checked_on_every_request(
    mcp_kit: Any, redis_url: str
) -> None:
    async with Gateway(store_config(mcp_kit, redis_url)) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
            assert opened.status_code == 200
            conversation = opened.headers["mcp-session-id"]
            assert conversation.startswith("tmc_") and len(conversation) > 40
            with redis.Redis.from_url(redis_url) as client:
                keys = [k.decode() for k in client.keys("toolmgmt:session:{mcp-*}")]
            # Stored under a hash of the id and the caller's credentials, never the id itself.
            assert keys == ["toolmgmt:session:{" + conversation_key(conversation, "") + "}"]
            assert conversation not in json.dumps(keys)

            mine = {**ACCEPT, "mcp-session-id": conversation}
            listed = await http.post(url, json=LIST, headers=mine)
            assert listed.status_code == 200 and "discover_tools" in listed.text
            for headers in (
                {**ACCEPT, "mcp-session-id": "tmc_forged"},
                {**mine, "authorization": "Bearer someone-else"},
            ):
                refused = await http.post(url, json=LIST, headers=headers)
                assert refused.status_code == 404
                assert refused.json()["error"]["message"] == "Session not found"
            missing = await http.post(url, json=LIST, headers=ACCEPT)
            assert missing.status_code == 400 and "Missing session ID" in missing.text
            assert (await http.get(url, headers=mine)).status_code == 405

            # The 2026 protocol needs no id: each request stands alone, on any replica.
            modern = {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "server/discover"}
            probe = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": META}
            told = await http.post(url, json=probe, headers=modern)
            assert told.status_code == 200 and "mcp-session-id" not in told.headers
            assert MODERN in told.json()["result"]["supportedVersions"]

            assert (await http.delete(url, headers=mine)).status_code == 204
            assert (await http.post(url, json=LIST, headers=mine)).status_code == 404
            assert (await http.delete(url, headers=mine)).status_code == 404

        # A 2025 client keeps one conversation in Redis, until its DELETE.
        async with Client(url, mode="legacy") as client:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            await client.call_tool("get_tool_schema", {"tool_name": "notes_echo"})
            await client.call_tool(
                "execute_tool", {"tool_name": "notes_echo", "arguments": {"token": "t"}}
            )
            with redis.Redis.from_url(redis_url) as raw:
                (key,) = raw.keys("toolmgmt:session:{mcp-*}")
                state = json.loads(raw.hget(key, "s"))
            assert state["loaded"] == ["notes_echo"] and len(state["results"]["records"]) == 1
        with redis.Redis.from_url(redis_url) as raw:
            assert raw.keys("toolmgmt:session:{mcp-*}") == []  # the client's DELETE ended it

        # A default client speaks 2026: nothing to keep without a result budget.
        async with Client(url) as client:
            assert client.protocol_version == MODERN
            assert await mcp_kit.execute(client, "notes_echo", token="u") == (False, "u")
        with redis.Redis.from_url(redis_url) as raw:
            assert raw.keys("toolmgmt:session:{mcp-*}") == []


async def test_a_2026_caller_keeps_its_result_budget_across_calls(
    mcp_kit: Any, redis_url: str
) -> None:
    config = store_config(mcp_kit, redis_url, "session_result_budget = 5000")
    async with Gateway(config) as gateway, serving(gateway) as url:
        for caller, calls in (("Bearer ada", 2), ("Bearer bob", 1)):
            async with Client(_transport(url, caller)) as client:
                assert client.protocol_version == MODERN
                for n in range(calls):
                    await mcp_kit.execute(client, "notes_echo", token=f"{caller}-{n}")
        with redis.Redis.from_url(redis_url) as raw:
            states = {
                key.decode(): json.loads(raw.hget(key, "s"))
                for key in raw.keys("toolmgmt:session:{mcp-*}")
            }
        # One conversation per caller (under a hash of its credentials), outliving its client.
        expected = {
            "toolmgmt:session:{" + principal_key("Bearer ada") + "}": 2,
            "toolmgmt:session:{" + principal_key("Bearer bob") + "}": 1,
        }
        assert {k: len(v["results"]["records"]) for k, v in states.items()} == expected
        assert not any("ada" in key or "bob" in key for key in states)


def _transport(url: str, authorization: str) -> Any:
    headers = {"Authorization": authorization}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


async def test_an_oversized_opening_request_is_refused_and_opens_nothing(
    mcp_kit: Any, redis_url: str
) -> None:
    padded = {**INITIALIZE, "params": {**INITIALIZE["params"], "pad": "x" * (1 << 20)}}
    async with Gateway(store_config(mcp_kit, redis_url)) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            refused = await http.post(url, json=padded, headers=ACCEPT)
            assert refused.status_code == 413 and "too large" in refused.text
            assert "mcp-session-id" not in refused.headers
            with redis.Redis.from_url(redis_url) as client:
                assert not client.keys("toolmgmt:session:{mcp-*}")
            assert (await http.post(url, json=INITIALIZE, headers=ACCEPT)).status_code == 200


async def test_the_health_check_needs_no_token_and_no_redis(
    mcp_kit: Any, closed_port: int, caplog: Any
) -> None:
    config = store_config(mcp_kit, f"redis://127.0.0.1:{closed_port}/0")
    with caplog.at_level(logging.ERROR, logger="toolmgmt_mcp"):
        gateway = Gateway(config)
        async with gateway, serving(gateway, token="secret") as url:
            async with httpx2.AsyncClient(timeout=30) as http:
                health = await http.get(url.replace("/mcp", "/healthz"))
                assert (health.status_code, health.text) == (200, "ok")
                assert (await http.post(url, json=INITIALIZE, headers=ACCEPT)).status_code == 401
    assert f"127.0.0.1:{closed_port}" in caplog.text  # said at start that Redis is not there


async def test_redis_down_gives_a_clear_503_and_never_hangs(mcp_kit: Any) -> None:
    with LocalRedis() as server:
        # With a result budget, a 2026 call needs its caller's conversation too.
        gateway = Gateway(store_config(mcp_kit, server.url, "session_result_budget = 5000"))
        async with gateway, serving(gateway) as url:
            async with Client(url, mode="legacy") as client, Client(url) as modern:
                await client.call_tool("discover_tools", {})
                await modern.call_tool("discover_tools", {})
                server.stop()
                for caller in (client, modern):
                    with anyio.fail_after(30), pytest.raises(MCPError) as down:
                        await caller.call_tool("discover_tools", {})
                    message = str(down.value)
                    assert "503" in message and "session store" in message, message
                    assert server.url in message
                # A 2026 request that keeps nothing is answered meanwhile.
                assert "discover_tools" in str(await modern.list_tools())

                # Opening a conversation meanwhile says the same (the SDK raises it from its
                # connection's task group).
                with anyio.fail_after(30), pytest.raises(Exception) as opening:  # noqa: B017
                    async with Client(url, mode="legacy") as other:
                        await other.list_tools()
                assert any("503" in str(e) and server.url in str(e) for e in _leaves(opening.value))

                # This Redis keeps nothing on disk: restarted, it forgot the conversation,
                # which the client is told the SDK's way; a 2026 caller starts a new one.
                server.start()
                with anyio.fail_after(30), pytest.raises(MCPError, match="Session not found"):
                    await client.call_tool("discover_tools", {})
                await modern.call_tool("discover_tools", {})
            async with Client(url, mode="legacy") as again:  # a new conversation works at once
                await again.call_tool("discover_tools", {})


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner = getattr(error, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [error]
