"""Talking to one upstream MCP server: connecting it, and what a failed request means.

:func:`open_client` makes the SDK client of an upstream, over stdio (a subprocess with a clean
environment, its stderr where the caller says, :func:`stderr_stream` by default) or streamable
HTTP (a pooled HTTP client with the upstream's headers, under which one broken request fails
alone, :class:`_OneRequestFails`).
:func:`request_fault` names what an exception from one call means (the call timed out, the
connection closed, one request's answer was lost, the upstream ended the session or rejected
the call, or it is unreachable), so the upstream decides what to do about it in one place
(:mod:`toolmgmt_mcp.upstreams`). A tool listing the SDK's model refuses is read tool by tool
(:func:`~toolmgmt_mcp.sdk_internals.list_page_raw`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TextIO

import anyio
import httpx2
import mcp.types as mcp_types
import pydantic
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from toolmgmt_core import (
    ToolAnswerLostError,
    ToolCallError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.integration import describe_exception
from toolmgmt_mcp.sdk_internals import list_page_raw
from toolmgmt_mcp.upstream_config import UpstreamConfig

__all__ = [
    "Fault",
    "fault_error",
    "list_tools",
    "open_client",
    "request_fault",
    "stderr_stream",
]

logger = logging.getLogger("toolmgmt_mcp")

_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_CLOSED_MESSAGE = "Connection closed"
"""The SDK's message when the whole connection is closed (not one HTTP request's stream)."""
_SESSION_GONE = frozenset({"Session terminated", "Session not found"})
"""What the SDK says when the upstream restarted and forgot our session: the client's own words
for a bare 404, or the server's JSON-RPC error (an SDK 2.x server answers "Session not found")."""
_REQUEST_FAILED = "HTTP request failed before an answer"
"""Start of the error a single failed HTTP request to an upstream resolves its call with."""
_MAX_CONNECTIONS = 512
"""HTTP connections to one upstream at most (calls in flight at once); more calls wait."""
_MAX_KEEPALIVE = 64
"""Idle HTTP connections to one upstream kept for reuse."""
_KEEPALIVE_EXPIRY = 2.0
"""Seconds an idle upstream HTTP connection is reused: below common server keep-alive limits
(uvicorn closes after 5 s), so a request is not sent on a connection the server is closing."""

Fault = Literal["timeout", "closed", "lost", "ended", "rejected", "unreachable"]
"""What one failed call means: no answer in time (``timeout``); the whole connection is gone
(``closed``); this request's HTTP exchange was lost while the connection lives (``lost``: the
call may or may not have run); the upstream forgot our session (``ended``); it answered with an
error (``rejected``); it cannot be reached (``unreachable``)."""

_UNREACHABLE = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    OSError,
    httpx2.HTTPError,
)


def open_client(
    config: UpstreamConfig,
    message_handler: Callable[..., Any],
    errlog: Callable[[UpstreamConfig], TextIO],
) -> Client:
    """The SDK client of one upstream (not connected yet), over stdio or streamable HTTP; a
    stdio upstream's stderr goes to ``errlog(config)``."""
    common: dict[str, Any] = {
        "mode": config.mode,
        "read_timeout_seconds": config.connect_timeout,
        "message_handler": message_handler,
    }
    if config.command:
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env), cwd=config.cwd
        )
        # stdio_client's default errlog is bound to sys.stderr at import; in a Jupyter kernel
        # that object has no file descriptor and the subprocess cannot start.
        return Client(stdio_client(params, errlog=errlog(config)), **common)
    assert config.url is not None
    return Client(_http_transport(config), **common)


def request_fault(exc: BaseException) -> Fault | None:
    """What ``exc``, raised by one call to an upstream, means; None when it is none of these
    (the caller lets it through)."""
    if isinstance(exc, TimeoutError):  # before OSError, of which it is one
        return "timeout"
    if isinstance(exc, MCPError):
        if exc.code == _REQUEST_TIMEOUT:
            return "timeout"
        if exc.code == _CONNECTION_CLOSED:
            return "closed" if exc.error.message == _CLOSED_MESSAGE else "lost"
        return "ended" if exc.error.message in _SESSION_GONE else "rejected"
    if isinstance(exc, _UNREACHABLE):
        return "unreachable"
    return None


def fault_error(
    fault: Fault, exc: BaseException, config: UpstreamConfig, tool_name: str, *, alive: bool
) -> tuple[ToolCallError, str | None]:
    """The error a call of ``tool_name`` (the upstream's name) ends with after ``fault``, and
    why the upstream is down now (None: the connection stays, only this call failed).

    Args:
        fault: what :func:`request_fault` made of ``exc``.
        exc: what the call raised.
        config: the upstream's configuration.
        tool_name: the tool's name upstream.
        alive: for a timeout, whether the upstream still answers other requests.
    """
    name = config.name
    gateway_name = f"{config.tool_prefix}{tool_name}"
    timeout = config.timeout
    message = exc.error.message if isinstance(exc, MCPError) else ""
    if fault == "timeout" and alive:
        # Only this call is slow: the upstream answers others, keep the connection.
        return ToolTimeoutError(
            f"Upstream {name!r} did not answer {gateway_name!r} within {timeout:g}s; the call "
            "was abandoned (the upstream still answers other calls).",
            tool_name=gateway_name,
        ), None
    if fault == "timeout":
        return ToolTimeoutError(
            f"Upstream {name!r} did not answer {gateway_name!r} within {timeout:g}s; the "
            "upstream is restarted on its next use. Tools of other domains still work.",
            tool_name=gateway_name,
        ), f"a call to {tool_name!r} got no answer within {timeout:g}s"
    if fault == "closed":
        # The whole connection is gone (the process died, the pipe closed).
        return ToolUnavailableError(
            f"Upstream {name!r} stopped during {gateway_name!r} (connection closed); it is "
            "restarted on its next use. Tools of other domains still work.",
            tool_name=gateway_name,
        ), f"the connection closed during a call to {tool_name!r}"
    if fault == "unreachable":
        return ToolUnavailableError(
            f"Upstream {name!r} is unreachable ({describe_exception(exc)}); it is retried on "
            "its next use. Tools of other domains still work.",
            tool_name=gateway_name,
        ), f"the connection failed during a call to {tool_name!r}: {describe_exception(exc)}"
    if fault == "lost":
        # One request's HTTP exchange was lost; the connection itself still works. Whether it
        # is sent again is the core's decision (it reads the tool's annotations).
        return ToolAnswerLostError(
            f"Upstream {name!r} lost the answer to {gateway_name!r} ({message}); the call may "
            "or may not have run. Try again.",
            tool_name=gateway_name,
        ), None
    if fault == "ended":
        # The upstream restarted and forgot our session: reconnect on the next use.
        return ToolUnavailableError(
            f"Upstream {name!r} ended its session during {gateway_name!r}; it is reconnected "
            "on its next use. Try again.",
            tool_name=gateway_name,
        ), f"it ended the session during a call to {tool_name!r}"
    return ToolExecutionError(
        f"Upstream {name!r} rejected {gateway_name!r}: {message}", tool_name=gateway_name
    ), None


async def list_tools(
    client: Client, timeout: float
) -> tuple[list[mcp_types.Tool], list[tuple[str, str]]]:
    """Every tool the upstream lists (all pages, within ``timeout`` seconds), and (name,
    reason) for each malformed one left out.

    Raises:
        TimeoutError: the listing took longer than ``timeout``.
    """
    tools: list[mcp_types.Tool] = []
    invalid: list[tuple[str, str]] = []
    cursor: str | None = None
    with anyio.fail_after(timeout):
        for _ in range(100):  # a paginator that never ends cannot hang us
            try:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(page.tools)
                cursor = page.next_cursor
            except pydantic.ValidationError as exc:
                # One bad tool fails the SDK's model of the whole page: read the page raw
                # and keep the tools that are valid on their own.
                try:
                    good, bad, cursor = await list_page_raw(client, cursor)
                except AttributeError:  # the SDK's internals moved: report the page as is
                    raise exc from None
                tools.extend(good)
                invalid.extend(bad)
            if not cursor:
                break
    return tools, invalid


@contextlib.asynccontextmanager
async def _http_transport(config: UpstreamConfig) -> AsyncIterator[Any]:
    """Streamable HTTP to ``config.url`` with its headers, closing the HTTP client after."""
    assert config.url is not None
    # Each call holds a connection while it runs. A call beyond the pool waits for one without
    # a pool timeout of its own: the call's timeout bounds the wait, and fails that call only.
    timeout = httpx2.Timeout(config.connect_timeout, read=max(300.0, config.timeout), pool=None)
    limits = httpx2.Limits(
        max_connections=_MAX_CONNECTIONS,
        max_keepalive_connections=_MAX_KEEPALIVE,
        keepalive_expiry=_KEEPALIVE_EXPIRY,
    )
    transport = _OneRequestFails(httpx2.AsyncHTTPTransport(limits=limits))
    async with httpx2.AsyncClient(
        headers=dict(config.headers), timeout=timeout, limits=limits, transport=transport
    ) as http:
        async with streamable_http_client(config.url, http_client=http) as streams:
            yield streams


class _OneRequestFails(httpx2.AsyncBaseTransport):
    """An HTTP transport under which a broken request fails alone.

    The MCP SDK runs each request's POST in its connection's task group, so an exception from
    one POST (a keep-alive connection the server closed, a read timeout) used to close the
    whole MCP connection and fail every call in flight on it. Here a POST that could not even
    reach the upstream (connect error) is sent once more, which is always safe; any other
    failure becomes a JSON-RPC error answer for that request only, which the SDK hands to its
    caller (``MCPError`` -32000). A request that still cannot connect raises: the upstream is
    unreachable, and the connection goes down and is restarted on the next use.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":  # the GET stream and DELETE handle their own failures
            return await self._inner.handle_async_request(request)
        for attempt in (1, 2):
            try:
                return await self._inner.handle_async_request(request)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                if attempt == 2:
                    raise
                logger.info(
                    "upstream request not sent (%s); sending it again", describe_exception(exc)
                )
            except httpx2.TransportError as exc:
                return _failed_request(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self._inner.aclose()


def _failed_request(exc: httpx2.TransportError) -> httpx2.Response:
    """A JSON-RPC error answer standing for a request whose HTTP exchange failed."""
    logger.warning("upstream HTTP request failed (this call only): %s", describe_exception(exc))
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": _CONNECTION_CLOSED,
            "message": f"{_REQUEST_FAILED}: {describe_exception(exc)}",
        },
    }
    return httpx2.Response(502, json=body)


def stderr_stream() -> TextIO:
    """Where a stdio upstream's stderr goes: ours when it is a real file, else the process's."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # noqa: SIM115 - the subprocess's stderr; closed with the GC
