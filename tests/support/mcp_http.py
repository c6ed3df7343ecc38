"""Raw HTTP against a gateway serving conversations from a session store (the tests of
``toolmgmt_gateway.conversations`` and ``toolmgmt_gateway.exchange``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from toolmgmt_gateway import Gateway, parse_config

__all__ = ["ACCEPT", "HANDSHAKE", "INITIALIZE", "LIST", "serving", "store_config"]

HANDSHAKE = HANDSHAKE_PROTOCOL_VERSIONS[-1]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ACCEPT = {"accept": "application/json, text/event-stream", "mcp-protocol-version": HANDSHAKE}


def store_config(mcp_kit: Any, redis_url: str, extra: str = "") -> Any:
    """A gateway over the notes upstream (stdio) with conversations in ``redis_url``;
    ``extra`` goes into ``[gateway]``."""
    text = (
        f'[gateway]\ntransport = "http"\nport = 0\n{extra}\n'
        + mcp_kit.stdio_upstream("notes")
        + f'\n[store]\nsessions = "{redis_url}"\nsession_ttl = 60\n'
    )
    return parse_config(text, source="gateway.toml")


@contextlib.asynccontextmanager
async def serving(gateway: Gateway, token: str | None = None) -> AsyncIterator[str]:
    """The gateway over HTTP on a free loopback port, for the block; its URL."""
    urls: list[str] = []
    ready = anyio.Event()

    def announce(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: gateway.run_http(port=0, token=token, on_ready=announce))
        with anyio.fail_after(30):
            await ready.wait()
        yield urls[0]
        tasks.cancel_scope.cancel()
