"""The gateway as a process over streamable HTTP on loopback, with a bearer token, in front of
one stdio upstream and one streamable-HTTP upstream."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOKEN = "test-token-4f9a"


class _Gateway:
    """A running ``python -m toolmgmt_mcp`` process and the URL it announced."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.url: str | None = None
        self.ready = threading.Event()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                self.url = match.group(1)
                self.ready.set()
        self.ready.set()


@pytest.fixture
def http_gateway(mcp_kit: Any, tmp_path: Path) -> Iterator[_Gateway]:
    k = mcp_kit
    port = k.free_port()
    upstream = subprocess.Popen(
        [k.PYTHON, str(k.NOTES), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    gateway: subprocess.Popen[str] | None = None
    try:
        k.wait_for_port(port, upstream)
        config = tmp_path / "gateway.toml"
        config.write_text(
            '[gateway]\ntransport = "http"\nport = 0\n\n'
            + k.stdio_upstream("notes")
            + f'\n[upstreams.remote]\nurl = "http://127.0.0.1:{port}/mcp"\ntimeout = 10\n'
        )
        gateway = subprocess.Popen(
            [sys.executable, "-m", "toolmgmt_mcp", "--config", str(config), "--token", TOKEN],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        running = _Gateway(gateway)
        assert running.ready.wait(30), "the gateway did not start"
        assert running.url, "".join(running.log)
        yield running
    finally:
        for process in (gateway, upstream):
            if process is not None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def _client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


async def test_http_gateway_serves_both_upstreams_and_refuses_bad_tokens(
    http_gateway: _Gateway, mcp_kit: Any
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
