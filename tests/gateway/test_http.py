"""The gateway as a process over streamable HTTP on loopback, with a bearer token, in front of
one stdio upstream and one streamable-HTTP upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.upstreams import NOTES, http_upstream  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOKEN = "test-token-4f9a"


@pytest.fixture
def http_gateway(mcp_kit: Any, tmp_path: Path) -> Iterator[LocalGateway]:
    """``python -m toolmgmt_gateway --http`` with a token, over a stdio and an HTTP upstream."""
    with http_upstream(NOTES) as upstream:
        config = tmp_path / "gateway.toml"
        config.write_text(
            mcp_kit.stdio_upstream("notes")
            + f'\n[upstreams.remote]\nurl = "{upstream.url}"\ntimeout = 10\n'
        )
        with LocalGateway(config, args=["--token", TOKEN], start_timeout=30) as gateway:
            yield gateway


def _client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


async def test_http_gateway_serves_both_upstreams_and_refuses_bad_tokens(
    http_gateway: LocalGateway, mcp_kit: Any
) -> None:
    k = mcp_kit
    url = http_gateway.url
    assert url is not None and url.startswith("http://127.0.0.1:")

    async with _client(url, TOKEN) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["discover_tools", "get_tool_schema", "execute_tool"]
        error, toc = await k.call(client, "discover_tools", {})
        assert set(toc["domains"]) == {"notes", "remote"}
        error, schema = await k.call(client, "get_tool_schema", {"tool_name": "remote_echo"})
        assert schema["parameters"]["required"] == ["token"]
        assert await k.execute(client, "remote_echo", token="over-http") == (
            False,
            "over-http",
        )
        assert await k.execute(client, "notes_echo", token="over-stdio") == (
            False,
            "over-stdio",
        )
        error, value = await k.execute(client, "remote_get_note", title="nothing")
        assert error and value["kind"] == "tool"

    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as raw:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            response = await raw.post(url, json=body, headers=headers)
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the SDK's error type for a 401 varies by version
        async with _client(url, None) as client:
            await client.list_tools()
