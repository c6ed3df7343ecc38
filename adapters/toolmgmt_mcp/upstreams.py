"""Connections to upstream MCP servers, and their tools as catalog :class:`Tool` objects.

Each upstream is one domain. Its connection lives in a task of the :class:`UpstreamManager`'s task
group, so a crash, a hang or a failed start takes down that domain only: its calls fail with a
:class:`~toolmgmt_core.errors.ToolUnavailableError` (or a ``ToolTimeoutError``) naming it, every
other domain keeps working, and the next use reconnects it. The catalog follows the upstream's
tool list: it is refreshed on ``notifications/tools/list_changed`` (or the 2026 protocol's
``subscriptions/listen`` event) and on every reconnect.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import logging
import math
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.abc
import httpx2
import mcp.types as mcp_types
import pydantic
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmgmt_core.catalog import ToolCatalog
from toolmgmt_core.errors import (
    CatalogError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.names import fold_name
from toolmgmt_core.policy import PolicyView
from toolmgmt_core.schema import tool_from_dict
from toolmgmt_core.tool import Tool
from toolmgmt_mcp.config import GatewayConfig, UpstreamConfig

__all__ = ["UpstreamManager", "UpstreamStatus", "capture_media", "relay_progress", "result_value"]

logger = logging.getLogger("toolmgmt_mcp")

_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_CLOSED_MESSAGE = "Connection closed"
"""The SDK's message when the whole connection is closed (not one HTTP request's stream)."""
_TIMEOUT_GRACE = 2.0
"""Seconds the core's own timeout waits beyond the upstream's, so ours fires first."""
_PREFIX = re.compile(r"^([A-Za-z0-9]+)[_\-.]")
_REQUEST_FAILED = "HTTP request failed before an answer"
"""Start of the error a single failed HTTP request to an upstream resolves its call with."""
_MAX_CONNECTIONS = 512
"""HTTP connections to one upstream at most (calls in flight at once); more calls wait."""
_MAX_KEEPALIVE = 64
"""Idle HTTP connections to one upstream kept for reuse."""
_KEEPALIVE_EXPIRY = 2.0
"""Seconds an idle upstream HTTP connection is reused: below common server keep-alive limits
(uvicorn closes after 5 s), so a request is not sent on a connection the server is closing."""


@dataclass
class UpstreamStatus:
    """What the gateway knows about one upstream."""

    name: str
    """The upstream's name (its domain)."""
    connected: bool = False
    """Whether a live connection is open."""
    error: str | None = None
    """Why it is down, when it is."""
    tools: list[str] = field(default_factory=list)
    """Gateway names of its tools in the catalog."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(upstream tool name, reason) for each tool left out (malformed definition, name clash)."""
    protocol_version: str | None = None
    """The protocol version negotiated with it."""


_MEDIA: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "toolmgmt_mcp_media", default=None
)


@contextlib.contextmanager
def capture_media() -> Iterator[list[Any]]:
    """Collect the non-text content blocks (images, audio, resources) of upstream calls made
    inside the block, so a gateway can pass them on beside the session's text result."""
    blocks: list[Any] = []
    token = _MEDIA.set(blocks)
    try:
        yield blocks
    finally:
        _MEDIA.reset(token)


_PROGRESS: contextvars.ContextVar[Callable[..., Awaitable[None]] | None] = contextvars.ContextVar(
    "toolmgmt_mcp_progress", default=None
)


@contextlib.contextmanager
def relay_progress(report: Callable[..., Awaitable[None]]) -> Iterator[None]:
    """Send the progress notifications of upstream calls made inside the block to ``report``
    (``report(progress, total, message)``, such as the gateway request's ``report_progress``)."""
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def result_value(result: mcp_types.CallToolResult) -> Any:
    """A JSON-compatible value for an upstream's successful ``CallToolResult``.

    Structured content when the upstream sends it (it is the same data as the text, typed);
    else the text (one block as a string); else the blocks, with images and binary resources
    replaced by a short description.
    """
    if result.structured_content is not None:
        return result.structured_content
    parts: list[Any] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            size = math.ceil(len(block.data) * 3 / 4)
            parts.append(f"[{block.type} {block.mime_type}, {size} bytes, not shown]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(
                {"resource": str(resource.uri), "text": text}
                if text is not None
                else f"[binary resource {resource.uri}, not shown]"
            )
        else:
            parts.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    if all(isinstance(p, str) for p in parts):
        return "\n".join(parts)
    return parts


def _error_text(result: mcp_types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, mcp_types.TextContent)]
    return "\n".join(texts).strip() or "the tool reported an error without a message"


class _Upstream:
    """One upstream: its configuration, its live client (if any) and the task that owns it."""

    def __init__(self, config: UpstreamConfig, manager: UpstreamManager) -> None:
        self.config = config
        self.manager = manager
        self.status = UpstreamStatus(config.name)
        self.client: Client | None = None
        self._stop: anyio.Event | None = None
        self._lock = anyio.Lock()
        self._failed_at = -math.inf
        self._answered_at = -math.inf
        """When the upstream last answered anything (a call, an error, a probe)."""
        self._probe_lock = anyio.Lock()
        self._retry_safe: set[str] = set()
        """Upstream tool names annotated read-only or idempotent: a lost call may be resent."""

    # -- connection -------------------------------------------------------------------------

    def _client(self) -> Client:
        config = self.config
        common: dict[str, Any] = {
            "mode": config.mode,
            "read_timeout_seconds": config.connect_timeout,
            "message_handler": self._on_message,
        }
        if config.command:
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=config.cwd
            )
            # stdio_client's default errlog is bound to sys.stderr at import; in a Jupyter kernel
            # that object has no file descriptor and the subprocess cannot start.
            return Client(stdio_client(params, errlog=_errlog()), **common)
        assert config.url is not None
        return Client(_http_transport(config), **common)

    async def _run(
        self,
        stop: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[Client] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Own the connection: open it, report it started, keep it until ``stop`` or a fault."""
        started = False
        try:
            async with self._client() as client:
                started = True
                task_status.started(client)
                async with anyio.create_task_group() as tasks:
                    if self._wants_listen(client):
                        tasks.start_soon(self._listen, client)
                    await stop.wait()
                    tasks.cancel_scope.cancel()
        except Exception as exc:
            if not started:
                raise
            # The connection died on its own (crash, closed pipe): only this domain goes down.
            self._mark_down(f"connection lost: {_describe(exc)}")
        finally:
            if self._stop is stop:
                self.client = None
                self.status.connected = False

    @staticmethod
    def _wants_listen(client: Client) -> bool:
        tools = client.server_capabilities.tools
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(
            tools and tools.list_changed
        )

    async def _listen(self, client: Client) -> None:
        """2026 protocol: tool-list changes arrive on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self.refresh()
        except Exception as exc:  # a lost stream only stops refreshes, never the connection
            logger.warning("upstream %r: tool-list subscription ended: %s", self.config.name, exc)

    async def _on_message(self, message: Any) -> None:
        """Handshake-era protocol: tool-list changes arrive as notifications."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.manager._tasks_or_raise().start_soon(self.refresh)

    async def connect(self) -> Client:
        """The live client, connecting (and listing tools) first when there is none.

        Raises:
            ToolUnavailableError: the upstream cannot be started or reached; names it and why.
        """
        if self.client is not None:
            return self.client
        async with self._lock:
            if self.client is not None:
                return self.client
            name = self.config.name
            wait = self._failed_at + self.config.reconnect_delay - time.monotonic()
            if wait > 0:
                raise ToolUnavailableError(
                    f"Upstream {name!r} is unavailable ({self.status.error}); retrying in "
                    f"{wait:.1f}s. Tools of other domains still work."
                )
            stop = anyio.Event()
            self._stop = stop
            client: Client | None = None
            error: str | None = None
            with anyio.move_on_after(self.config.connect_timeout):
                try:
                    client = await self.manager._tasks_or_raise().start(self._run, stop)
                except Exception as exc:
                    error = f"failed to start: {_describe(exc)}"
            if client is None:
                stop.set()
                self._mark_down(error or f"did not start within {self.config.connect_timeout:g}s")
                raise ToolUnavailableError(
                    f"Upstream {name!r} is unavailable: {self.status.error}. Tools of other "
                    "domains still work."
                )
            self.client = client
            self.status.connected = True
            self.status.error = None
            self.status.protocol_version = client.protocol_version
            try:
                await self._list_and_install(client)
            except Exception as exc:
                self._mark_down(f"listing its tools failed: {_describe(exc)}")
                raise ToolUnavailableError(
                    f"Upstream {name!r} is unavailable: {self.status.error}."
                ) from exc
            logger.info("upstream %r connected (%d tools)", name, len(self.status.tools))
            return client

    def _mark_down(self, error: str) -> None:
        self.status.error = error
        self.status.connected = False
        self._failed_at = time.monotonic()
        self.client = None
        if self._stop is not None:
            self._stop.set()
        logger.warning("upstream %r is down: %s", self.config.name, error)

    async def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.client = None

    # -- tools ------------------------------------------------------------------------------

    async def refresh(self) -> None:
        """List the upstream's tools again and bring the catalog in line."""
        client = self.client
        if client is None:
            return
        try:
            await self._list_and_install(client)
        except Exception as exc:
            logger.warning("upstream %r: refreshing its tools failed: %s", self.config.name, exc)

    async def _list_and_install(self, client: Client) -> None:
        tools: list[mcp_types.Tool] = []
        invalid: list[tuple[str, str]] = []
        cursor: str | None = None
        with anyio.fail_after(self.config.connect_timeout):
            for _ in range(100):  # a paginator that never ends cannot hang us
                try:
                    page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                except pydantic.ValidationError as exc:
                    # One bad tool fails the SDK's model of the whole page: read the page raw
                    # and keep the tools that are valid on their own.
                    try:
                        good, bad, cursor = await _list_page_raw(client, cursor)
                    except AttributeError:  # the SDK's internals moved: report the page as is
                        raise exc from None
                    tools.extend(good)
                    invalid.extend(bad)
                if not cursor:
                    break
        self.manager._install(self, tools, invalid)

    def to_tools(self, listed: list[mcp_types.Tool]) -> tuple[list[Tool], list[tuple[str, str]]]:
        """Catalog tools for the upstream's listed tools, and the ones skipped with the reason."""
        config = self.config
        prefixes: dict[str, int] = {}
        for item in listed:
            match = _PREFIX.match(item.name)
            if match:
                prefixes[match.group(1)] = prefixes.get(match.group(1), 0) + 1
        tools: list[Tool] = []
        skipped: list[tuple[str, str]] = []
        self._retry_safe = {
            item.name
            for item in listed
            if item.annotations
            and (item.annotations.read_only_hint or item.annotations.idempotent_hint)
        }
        for item in listed:
            name = f"{config.tool_prefix}{item.name}"
            definition = {
                "name": name,
                "description": item.description or item.title or "",
                "inputSchema": item.input_schema,
                "outputSchema": item.output_schema,
                "annotations": item.annotations.model_dump(by_alias=True, exclude_none=True)
                if item.annotations
                else None,
            }
            wrapped = _wrapped_output(item.output_schema)
            if wrapped is not None:  # the SDK's {"result": x} wrapping of a plain return value
                definition["outputSchema"] = wrapped
            if item.title and not (item.annotations and item.annotations.title):
                definition["annotations"] = {
                    **(definition["annotations"] or {}),
                    "title": item.title,
                }
            try:
                tool = tool_from_dict(
                    definition,
                    domain=config.name,
                    group=self._group(item.name, prefixes),
                    profiles=config.profiles,
                    max_result_tokens=config.max_result_tokens,
                    truncation=config.truncation,
                    # A call may first have to restart the upstream: both budgets count.
                    timeout=config.connect_timeout + config.timeout + _TIMEOUT_GRACE,
                    handler=self._handler(item.name, unwrap=wrapped is not None),
                    metadata={"upstream": config.name, "upstream_tool": item.name},
                    defer_loading=False
                    if _matches(name, self.manager.config.gateway.always_on)
                    else None,
                )
            except CatalogError as exc:
                skipped.append((item.name, f"malformed tool definition: {exc}"))
                continue
            tools.append(tool)
        return tools, skipped

    def _group(self, tool_name: str, prefixes: Mapping[str, int]) -> str:
        for group, patterns in self.config.groups.items():
            if _matches(tool_name, patterns):
                return group
        if self.config.group_by_prefix:
            match = _PREFIX.match(tool_name)
            if match and prefixes.get(match.group(1), 0) > 1:
                return match.group(1).lower()
        return "general"

    def _handler(self, tool_name: str, *, unwrap: bool = False) -> Callable[..., Any]:
        async def call_upstream(**arguments: Any) -> Any:
            value = await self.call(tool_name, arguments)
            if unwrap and isinstance(value, dict) and set(value) == {"result"}:
                return value["result"]
            return value

        call_upstream.__name__ = f"{self.config.tool_prefix}{tool_name}"
        return call_upstream

    async def call(self, tool_name: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool_name`` upstream; the result value, or a gateway or tool error.

        A failure of this call alone (its HTTP request broke, it timed out while the upstream
        still answers) fails this call only: the connection and the calls beside it go on. A
        call whose request was lost is sent once more when the tool is annotated read-only or
        idempotent, never otherwise (it may have run).

        Raises:
            ToolUnavailableError: the upstream is down, died during the call, or lost the answer.
            ToolTimeoutError: no answer within the upstream's timeout (the upstream is
                restarted on its next use when it does not answer a probe either).
            ToolExecutionError: the upstream tool reported an error (``isError``) or rejected
                the call.
        """
        attempts = 2 if tool_name in self._retry_safe else 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._call_once(tool_name, arguments)
            except _LostAnswer as lost:
                if attempt == attempts:
                    raise lost.error from lost.__cause__
                logger.info(
                    "upstream %r: resending %r (read-only or idempotent) after: %s",
                    self.config.name,
                    tool_name,
                    lost.error,
                )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call_once(self, tool_name: str, arguments: dict[str, Any]) -> Any:
        name = self.config.name
        gateway_name = f"{self.config.tool_prefix}{tool_name}"
        client = await self.connect()
        timeout = self.config.timeout
        started = time.monotonic()
        try:
            with anyio.fail_after(timeout):
                result = await client.call_tool(
                    tool_name,
                    arguments,
                    read_timeout_seconds=timeout,
                    progress_callback=_progress_callback(),
                )
        except (TimeoutError, MCPError) as exc:
            if isinstance(exc, TimeoutError) or exc.code == _REQUEST_TIMEOUT:
                if await self._alive_since(client, started):
                    # Only this call is slow: the upstream answers others, keep the connection.
                    raise ToolTimeoutError(
                        f"Upstream {name!r} did not answer {gateway_name!r} within "
                        f"{timeout:g}s; the call was abandoned (the upstream still answers "
                        "other calls).",
                        tool_name=gateway_name,
                    ) from exc
                self._mark_down(f"a call to {tool_name!r} got no answer within {timeout:g}s")
                raise ToolTimeoutError(
                    f"Upstream {name!r} did not answer {gateway_name!r} within {timeout:g}s; the "
                    "upstream is restarted on its next use. Tools of other domains still work.",
                    tool_name=gateway_name,
                ) from exc
            if exc.code == _CONNECTION_CLOSED and exc.error.message == _CLOSED_MESSAGE:
                # The whole connection is gone (the process died, the pipe closed).
                self._mark_down(f"the connection closed during a call to {tool_name!r}")
                raise ToolUnavailableError(
                    f"Upstream {name!r} stopped during {gateway_name!r} (connection closed); it "
                    "is restarted on its next use. Tools of other domains still work.",
                    tool_name=gateway_name,
                ) from exc
            if exc.code == _CONNECTION_CLOSED:
                # One request's HTTP exchange was lost; the connection itself still works.
                error = ToolUnavailableError(
                    f"Upstream {name!r} lost the answer to {gateway_name!r} "
                    f"({exc.error.message}); the call may or may not have run. Try again.",
                    tool_name=gateway_name,
                )
                raise _LostAnswer(error) from exc
            self._answered_at = time.monotonic()
            if exc.error.message == "Session terminated":
                # The upstream restarted and forgot our session: reconnect on the next use.
                self._mark_down(f"it ended the session during a call to {tool_name!r}")
                raise ToolUnavailableError(
                    f"Upstream {name!r} ended its session during {gateway_name!r}; it is "
                    "reconnected on its next use. Try again.",
                    tool_name=gateway_name,
                ) from exc
            raise ToolExecutionError(
                f"Upstream {name!r} rejected {gateway_name!r}: {exc.error.message}",
                tool_name=gateway_name,
            ) from exc
        except (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
            OSError,
            httpx2.HTTPError,
        ) as exc:
            self._mark_down(
                f"the connection failed during a call to {tool_name!r}: {_describe(exc)}"
            )
            raise ToolUnavailableError(
                f"Upstream {name!r} is unreachable ({_describe(exc)}); it is retried on its next "
                "use. Tools of other domains still work.",
                tool_name=gateway_name,
            ) from exc
        self._answered_at = time.monotonic()
        if result.is_error:
            raise ToolExecutionError(_error_text(result), tool_name=gateway_name)
        media = _MEDIA.get()
        if media is not None:
            media.extend(b for b in result.content if not isinstance(b, mcp_types.TextContent))
        return result_value(result)

    async def _alive_since(self, client: Client, started: float) -> bool:
        """Whether the upstream answered anything since ``started``, else whether it answers a
        probe (one tool-list page) now: one probe at a time, bounded by the call and connect
        timeouts."""
        async with self._probe_lock:
            if self._answered_at > started:
                return True
            if self.client is not client:  # another probe already found it dead
                return False
            with anyio.move_on_after(min(self.config.timeout, self.config.connect_timeout)):
                try:
                    # ``ping`` is gone from the 2026 protocol; a tool-list page works in all.
                    await client.list_tools(cache_mode="refresh")
                except Exception as exc:
                    logger.info("upstream %r: liveness probe failed: %s", self.config.name, exc)
                    return False
                self._answered_at = time.monotonic()
                return True
            return False


class _LostAnswer(Exception):
    """One call's request or answer was lost while the connection lives (inside ``call``)."""

    def __init__(self, error: ToolUnavailableError) -> None:
        super().__init__(str(error))
        self.error = error


class UpstreamManager:
    """Every upstream of a gateway configuration, feeding one :class:`ToolCatalog`.

    Usage::

        catalog = ToolCatalog()
        async with UpstreamManager(config, catalog) as upstreams:
            print(upstreams.status())  # which are up, their tools, what was skipped
            await catalog.get("notes_get_note").handler(title="x")

    Entering connects every upstream concurrently; one that fails to start is reported in
    :meth:`status` and retried on its next use, the others are ready. With a ``policy`` (the
    gateway's view), an upstream whose every tool the policy hides is never started, and no
    call of a name the policy hides ever starts or restarts an upstream: such a name answers
    exactly as an unknown one.
    """

    def __init__(
        self, config: GatewayConfig, catalog: ToolCatalog, policy: PolicyView | None = None
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.policy = policy
        """The gateway's policy view, or None (every upstream may start)."""
        self._upstreams = {u.name: _Upstream(u, self) for u in config.upstreams}
        self._tasks: anyio.abc.TaskGroup | None = None
        self._exit: Any = None

    def _tasks_or_raise(self) -> anyio.abc.TaskGroup:
        if self._tasks is None:
            raise RuntimeError(
                "UpstreamManager is not running; use 'async with UpstreamManager(...)'."
            )
        return self._tasks

    async def __aenter__(self) -> UpstreamManager:
        self._exit = anyio.create_task_group()
        self._tasks = await self._exit.__aenter__()
        async with anyio.create_task_group() as starting:
            for upstream in self._upstreams.values():
                if self._may_show(upstream):
                    starting.start_soon(self._connect_quietly, upstream)
                else:
                    upstream.status.error = (
                        "not started: the gateway's policy hides every tool of this domain"
                    )
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        for upstream in self._upstreams.values():
            await upstream.close()
        tasks, self._tasks = self._tasks, None
        assert tasks is not None
        tasks.cancel_scope.cancel()
        await self._exit.__aexit__(*exc_info)

    def _may_show(self, upstream: _Upstream, tool_name: str | None = None) -> bool:
        """Whether the policy could show ``tool_name`` (any tool of ``upstream`` when None)."""
        if self.policy is None:
            return True
        config = upstream.config
        return self.policy.may_show(
            config.name, tool_name, name_prefix=config.tool_prefix, profiles=config.profiles
        )

    @staticmethod
    async def _connect_quietly(upstream: _Upstream) -> None:
        try:
            await upstream.connect()
        except ToolUnavailableError:
            pass  # recorded in its status; retried on the next use

    def status(self) -> list[UpstreamStatus]:
        """The state of every upstream, in configuration order."""
        return [u.status for u in self._upstreams.values()]

    def names(self) -> list[str]:
        """The upstream names (domains), in configuration order."""
        return list(self._upstreams)

    async def refresh(self, name: str) -> None:
        """List one upstream's tools again (connecting it first if needed)."""
        upstream = self._upstreams[name]
        if upstream.client is None:
            await upstream.connect()
        else:
            await upstream.refresh()

    def revive_soon(self) -> None:
        """Start reconnecting every upstream that is down and due, without waiting for it."""
        now = time.monotonic()
        for upstream in self._upstreams.values():
            due = upstream._failed_at + upstream.config.reconnect_delay <= now
            if upstream.client is None and due and not upstream._lock.locked():
                if self._may_show(upstream):
                    self._tasks_or_raise().start_soon(self._connect_quietly, upstream)

    async def ensure_for(self, tool_name: str) -> None:
        """Before calling ``tool_name``: reconnect its upstream when it is down.

        A tool whose upstream failed to start is not in the catalog yet; this finds the upstream
        by the name's domain prefix (names compared folded, as lookup does) and connects it, so
        the call either works or fails with an error that names the upstream instead of
        "unknown tool". A name the policy hides never starts anything: its call is answered as
        an unknown name, and the upstream stays as it is.

        Raises:
            ToolUnavailableError: the upstream is still down.
        """
        if self.catalog.find(tool_name) is not None:
            return
        folded = fold_name(tool_name)
        by_prefix = sorted(self._upstreams.values(), key=lambda u: -len(u.config.tool_prefix))
        for upstream in by_prefix:
            prefix = fold_name(upstream.config.tool_prefix)
            if prefix and folded.startswith(prefix) and upstream.client is None:
                if self._may_show(upstream, tool_name):
                    await upstream.connect()
                return

    def _install(
        self,
        upstream: _Upstream,
        listed: list[mcp_types.Tool],
        invalid: list[tuple[str, str]] = (),  # type: ignore[assignment]
    ) -> None:
        """Bring the catalog in line with ``upstream``'s listed tools."""
        tools, skipped = upstream.to_tools(listed)
        skipped = [*invalid, *skipped]
        domain = upstream.config.name
        new = {t.name for t in tools}
        for old in [t.name for t in self.catalog if t.domain == domain]:
            if old not in new:
                self.catalog.remove(old)
        kept: list[str] = []
        for tool in tools:
            existing = self.catalog.find(tool.name)  # folded: a look-alike is a clash too
            if existing is not None and existing.domain != domain:
                skipped.append(
                    (tool.name, f"name clash with {existing.name!r} of domain {existing.domain!r}")
                )
                continue
            try:
                self.catalog.replace(tool)
            except CatalogError as exc:  # a look-alike of another tool of this upstream
                skipped.append((tool.name, str(exc)))
                continue
            kept.append(tool.name)
        for item, reason in skipped:
            logger.warning("upstream %r: skipped tool %r: %s", domain, item, reason)
        upstream.status.tools = kept
        upstream.status.skipped = skipped


def _progress_callback() -> Any:
    report = _PROGRESS.get()
    if report is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        try:
            await report(progress, total, message)
        except Exception as exc:  # a client that went away must not fail the call
            logger.debug("progress not relayed: %s", exc)

    return forward


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
                logger.info("upstream request not sent (%s); sending it again", _describe(exc))
            except httpx2.TransportError as exc:
                return _failed_request(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self._inner.aclose()


def _failed_request(exc: httpx2.TransportError) -> httpx2.Response:
    """A JSON-RPC error answer standing for a request whose HTTP exchange failed."""
    logger.warning("upstream HTTP request failed (this call only): %s", _describe(exc))
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": _CONNECTION_CLOSED, "message": f"{_REQUEST_FAILED}: {_describe(exc)}"},
    }
    return httpx2.Response(502, json=body)


def _errlog() -> TextIO:
    """Where a stdio upstream's stderr goes: ours when it is a real file, else the process's."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def _wrapped_output(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The inner schema when ``schema`` is a lone required ``result`` property, else None."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if (
        schema.get("type") == "object"
        and isinstance(properties, Mapping)
        and set(properties) == {"result"}
        and schema.get("required") == ["result"]
        and isinstance(properties["result"], Mapping)
    ):
        return {k: v for k, v in properties["result"].items() if k != "title"}
    return None


async def _list_page_raw(
    client: Client, cursor: str | None
) -> tuple[list[mcp_types.Tool], list[tuple[str, str]], str | None]:
    """One ``tools/list`` page read as plain JSON: (valid tools, (name, reason) skipped, cursor)."""
    # The SDK validates every result against its model before any caller sees it, so this
    # goes one level down (private API, hence the narrow use: only after a validation failure).
    session: Any = client.session
    request = mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    session._stamp(data, options)
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)
    good: list[mcp_types.Tool] = []
    bad: list[tuple[str, str]] = []
    for position, item in enumerate(raw.get("tools") or []):
        label = str(item.get("name", f"#{position}")) if isinstance(item, dict) else f"#{position}"
        try:
            good.append(mcp_types.Tool.model_validate(item))
        except pydantic.ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            problem = exc.errors()[0]["msg"]
            bad.append((label, f"malformed tool definition: {where}: {problem}"))
    # Let the SDK know the valid tools (it checks structured results against their schemas).
    session._absorb_tool_listing(mcp_types.ListToolsResult(tools=good), complete=False)
    cursor = raw.get("nextCursor")
    return good, bad, cursor if isinstance(cursor, str) and cursor else None


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _describe(exc: BaseException) -> str:
    """A one-line description of ``exc``, unwrapping exception groups."""
    while getattr(exc, "exceptions", None):  # an exception group: its first cause
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
