"""MCP clients that start calling together: the load of ``gateway_load.py`` and ``scaleout.py``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client

__all__ = ["together"]


async def together(
    url: str,
    clients: int,
    run: Callable[[int, Any], Awaitable[None]],
    *,
    prepare: Callable[[Any], Awaitable[Any]] | None = None,
    on_crash: Callable[[int, BaseException], None] | None = None,
    mode: str = "legacy",
) -> None:
    """Open ``clients`` connections to the MCP server at ``url`` (each ``prepare``d, say with
    the call that loads its tool); once every one is open, ``run(number, client)`` on all of
    them at once. Returns when every ``run`` has, the connections closed.

    ``on_crash(number, exc)``: a client whose session ended with an exception (the SDK's client
    does not survive a connection closed before any response) is reported there instead of
    ending every other client; None lets it end them. ``mode`` is the clients' protocol:
    ``legacy`` (2025: one conversation per client, the one the benches check and their
    published figures measured), or ``auto`` (what ``mcp.Client`` speaks by default: 2026)."""
    connected = anyio.Event()
    ready = 0

    async def one_client(number: int) -> None:
        if on_crash is None:
            await session(number)
            return
        try:
            await session(number)
        except Exception as exc:  # an ExceptionGroup from the client's own task group
            on_crash(number, exc)

    async def session(number: int) -> None:
        nonlocal ready
        async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
            if prepare is not None:
                await prepare(client)
            ready += 1
            if ready == clients:
                connected.set()
            await connected.wait()  # every connection open before the first call
            await run(number, client)

    async with anyio.create_task_group() as tasks:
        for number in range(clients):
            tasks.start_soon(one_client, number)
