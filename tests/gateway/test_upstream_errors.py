"""How an upstream call's failures map to errors, with the SDK client faked at the wire edge."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
import mcp.types as mcp_types  # noqa: E402
from mcp import MCPError  # noqa: E402
from toolmgmt_gateway import GatewayUpstreams, parse_config  # noqa: E402
from toolmgmt_mcp.transport import _OneRequestFails  # noqa: E402

from toolmgmt_core import (
    ContentResult,  # noqa: E402
    ToolCatalog,  # noqa: E402
)
from toolmgmt_core._model.errors import (  # noqa: E402
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
)

pytestmark = pytest.mark.anyio


class _FakeClient:
    """Stands in for ``mcp.Client`` and its session: ``call_tool`` raises or returns what it
    was given."""

    protocol_version = "2025-11-25"

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.session = self

    async def call_tool(self, name: str, arguments: dict[str, Any], **_: Any) -> Any:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def _upstream(outcome: Any) -> Any:
    config = parse_config('[upstreams.web]\nurl = "http://127.0.0.1:9/mcp"\n')
    upstream = GatewayUpstreams(config, ToolCatalog()).by_name["web"]
    upstream.client = _FakeClient(outcome)
    upstream.status.connected = True
    return upstream


async def test_a_lost_http_response_keeps_the_connection() -> None:
    upstream = _upstream(MCPError(code=-32000, message="SSE stream ended without a response"))
    with pytest.raises(ToolUnavailableError, match="lost the answer to 'web_search'"):
        await upstream.call("search", {})
    assert upstream.client is not None and upstream.status.connected


async def test_a_closed_connection_takes_the_upstream_down() -> None:
    upstream = _upstream(MCPError(code=-32000, message="Connection closed"))
    with pytest.raises(ToolUnavailableError, match="'web' stopped during 'web_search'"):
        await upstream.call("search", {})
    assert upstream.client is None and "connection closed" in upstream.status.error


async def test_a_request_timeout_is_a_timeout_naming_the_upstream() -> None:
    upstream = _upstream(MCPError(code=-32001, message="Request 'tools/call' timed out"))
    with pytest.raises(ToolTimeoutError, match="'web' did not answer 'web_search'"):
        await upstream.call("search", {})
    assert upstream.client is None


async def test_protocol_rejections_and_is_error_are_tool_errors() -> None:
    upstream = _upstream(MCPError(code=-32602, message="Unknown tool: search"))
    with pytest.raises(ToolExecutionError, match="rejected 'web_search': Unknown tool") as caught:
        await upstream.call("search", {})
    assert caught.value.kind == "tool"
    failed = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="quota exceeded")], is_error=True
    )
    # An isError result goes to the core as it came: the core's handler run reports it as the
    # tool's own failure, as for any tool (tests/adapters/mcp/test_gateway.py shows the answer).
    answered = await _upstream(failed).call("search", {})
    assert answered.is_error and answered.error_text() == "quota exceeded"


def _content(result: mcp_types.CallToolResult) -> ContentResult:
    return ContentResult.from_mcp(result.model_dump(mode="json", by_alias=True))


def test_an_mcp_result_reaches_the_core_as_content_blocks() -> None:
    text = mcp_types.TextContent(type="text", text="hello")
    image = mcp_types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png")
    assert _content(mcp_types.CallToolResult(content=[text])).value() == "hello"
    structured = mcp_types.CallToolResult(content=[text], structured_content={"a": 1})
    assert _content(structured).value() == {"a": 1}
    mixed = _content(mcp_types.CallToolResult(content=[text, image]))
    assert mixed.value() == "hello\n[image image/png, 6 bytes, not shown]"
    assert [b["type"] for b in mixed.media()] == ["image"]  # passed on with media = "pass"
    failed = _content(mcp_types.CallToolResult(content=[text], is_error=True))
    assert failed.is_error and failed.error_text() == "hello"


async def test_an_ended_session_takes_the_upstream_down_for_a_reconnect() -> None:
    upstream = _upstream(MCPError(code=-32600, message="Session terminated"))
    with pytest.raises(ToolUnavailableError, match="'web' ended its session during 'web_search'"):
        await upstream.call("search", {})
    assert upstream.client is None and "ended the session" in upstream.status.error


class _Flaky(httpx2.AsyncBaseTransport):
    """Raises the queued exceptions one request at a time, then answers 200."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.requests = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        if self.failures:
            raise self.failures.pop(0)
        return httpx2.Response(200, json={"ok": True})


async def test_an_http_request_that_could_not_connect_is_sent_once_more() -> None:
    refused = httpx2.ConnectError("connection refused")
    inner = _Flaky(refused)
    async with httpx2.AsyncClient(transport=_OneRequestFails(inner)) as http:
        response = await http.post("http://127.0.0.1:9/mcp", json={"id": 1})
    assert response.status_code == 200 and inner.requests == 2
    inner = _Flaky(refused, httpx2.ConnectError("still refused"))
    async with httpx2.AsyncClient(transport=_OneRequestFails(inner)) as http:
        with pytest.raises(httpx2.ConnectError):  # unreachable: the connection goes down
            await http.post("http://127.0.0.1:9/mcp", json={"id": 1})
    assert inner.requests == 2


async def test_an_http_request_that_may_have_been_sent_is_answered_with_an_error() -> None:
    inner = _Flaky(httpx2.RemoteProtocolError("Server disconnected without sending a response."))
    async with httpx2.AsyncClient(transport=_OneRequestFails(inner)) as http:
        response = await http.post("http://127.0.0.1:9/mcp", json={"id": 1})
        assert inner.requests == 1  # never resent here: it may have reached the upstream
        assert response.status_code == 502
        error = response.json()["error"]
        assert error["code"] == -32000 and "RemoteProtocolError" in error["message"]
        # A GET (the SDK's notification stream) handles its own failures: passed through.
        inner.failures = [httpx2.ReadError("reset")]
        with pytest.raises(httpx2.ReadError):
            await http.get("http://127.0.0.1:9/mcp")


@pytest.mark.parametrize("message", ["Session terminated", "Session not found"])
def test_an_upstream_that_forgot_our_session_is_reconnected_not_blamed(message: str) -> None:
    # An SDK 2.x upstream that restarted answers a bare 404 ("Session terminated", the client's
    # words) or a JSON-RPC error ("Session not found", the server's): either way the session
    # ended, so the upstream is reconnected on next use instead of every call failing.
    from mcp import MCPError
    from toolmgmt_mcp.transport import request_fault

    assert request_fault(MCPError(code=-32600, message=message)) == "ended"
    assert request_fault(MCPError(code=-32602, message="Invalid params")) == "rejected"
