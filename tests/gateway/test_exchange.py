"""A stored conversation's plain requests answered in their own task
(``toolmgmt_gateway.exchange``): the same JSON-RPC answers as the SDK's stateless transport
gives, without it; anything that needs the SDK (a progress token, a header it refuses) still
goes there."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("redis")

import httpx2  # noqa: E402
import mcp.server.streamable_http_manager as sdk_manager  # noqa: E402
from support.mcp_http import ACCEPT, INITIALIZE, serving, store_config  # noqa: E402
from toolmgmt_gateway import Gateway  # noqa: E402
from toolmgmt_gateway.exchange import direct_request  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PLAIN = [  # (what, request): each answered directly when direct_answers is on
    ("list", {"method": "tools/list"}),
    ("ping", {"method": "ping"}),
    (
        "search",
        {
            "method": "tools/call",
            "params": {"name": "discover_tools", "arguments": {"query": "note"}},
        },
    ),
    (
        "call",
        {
            "method": "tools/call",
            "params": {
                "name": "execute_tool",
                "arguments": {"tool_name": "notes_echo", "arguments": {"token": "t-1"}},
            },
        },
    ),
    (
        "bad arguments",
        {
            "method": "tools/call",
            "params": {
                "name": "execute_tool",
                "arguments": {"tool_name": "notes_echo", "arguments": {"token": 7}},
            },
        },
    ),
    ("unknown tool", {"method": "tools/call", "params": {"name": "nope", "arguments": {}}}),
    ("unknown method", {"method": "resources/list"}),
    ("invalid params", {"method": "tools/call", "params": {"arguments": {}}}),
]
PROGRESS = {
    "method": "tools/call",
    "params": {
        "name": "execute_tool",
        "arguments": {"tool_name": "notes_echo", "arguments": {"token": "t-2"}},
        "_meta": {"progressToken": "p-1"},
    },
}


def _messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE or JSON answer."""
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return [
        json.loads(line.removeprefix("data:"))
        for line in response.text.splitlines()
        if line.startswith("data:")
    ]


@pytest.fixture
def transports(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every SDK transport made for a request (the stateless path makes one per request)."""
    made: list[Any] = []
    original = sdk_manager.StreamableHTTPServerTransport

    class Counted(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(sdk_manager, "StreamableHTTPServerTransport", Counted)
    return made


async def _exchange(url: str, requests: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """Open a conversation, then send each request; (content type, messages) of each answer."""
    answers = []
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
        await http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        for number, request in enumerate(requests, start=10):
            response = await http.post(
                url, json={"jsonrpc": "2.0", "id": number, **request}, headers=headers
            )
            assert response.status_code == 200, response.text
            answers.append((response.headers["content-type"], _messages(response)))
    return answers


async def test_direct_answers_equal_the_sdks_without_its_transport(
    mcp_kit: Any, redis_url: str, transports: list[Any]
) -> None:
    requests = [request for _, request in PLAIN] + [PROGRESS]
    results = {}
    for direct in (False, True):
        transports.clear()
        config = store_config(mcp_kit, redis_url, f"direct_answers = {str(direct).lower()}")
        async with Gateway(config) as gateway, serving(gateway) as url:
            results[direct] = await _exchange(url, requests)
        results[direct, "transports"] = len(transports)
    assert [messages for _, messages in results[True]] == [m for _, m in results[False]]
    assert all(kind.startswith("text/event-stream") for kind, _ in results[True])
    by_name = dict(zip([name for name, _ in PLAIN], results[True], strict=False))
    assert "t-1" in by_name["call"][1][0]["result"]["content"][0]["text"]
    assert by_name["unknown tool"][1][0]["error"]["code"] == -32602
    assert by_name["unknown method"][1][0]["error"]["code"] == -32601
    # The SDK made a transport for the initialize, the notification and every request; with
    # direct answers, only for the initialize, the notification and the progress-token call.
    assert results[False, "transports"] == 2 + len(requests)
    assert results[True, "transports"] == 3


@pytest.mark.parametrize(
    "headers, body",
    [
        ({"content-type": "text/plain"}, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ({"mcp-protocol-version": "1999-01-01"}, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ({}, {"jsonrpc": "2.0", "method": "notifications/cancelled"}),
        ({}, {"jsonrpc": "2.0", "id": True, "method": "ping"}),
        ({}, {"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
        ({}, {"jsonrpc": "2.0", "id": 1, "method": "ping", "extra": 1}),
        ({}, [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        ({}, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []}),
        ({}, {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"_meta": {"progressToken": 1}}}),
    ],
)
def test_what_the_sdk_must_answer_is_left_to_it(headers: dict[str, str], body: Any) -> None:
    base = {
        "content-type": "application/json",
        "mcp-protocol-version": ACCEPT["mcp-protocol-version"],
    }
    assert direct_request(base, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}') is not None
    assert direct_request({**base, **headers}, json.dumps(body).encode()) is None


async def test_refused_headers_get_the_sdks_own_refusal(mcp_kit: Any, redis_url: str) -> None:
    async with Gateway(store_config(mcp_kit, redis_url)) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
            headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
            ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
            json_only = await http.post(
                url, json=ping, headers={**headers, "accept": "application/json"}
            )
            assert json_only.status_code == 406
            rebinding = await http.post(url, json=ping, headers={**headers, "host": "evil.test"})
            assert rebinding.status_code == 421
            fine = await http.post(url, json=ping, headers=headers)
            assert fine.status_code == 200 and _messages(fine) == [
                {"jsonrpc": "2.0", "id": 5, "result": {}}
            ]
