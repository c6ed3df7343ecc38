"""Connections to upstream MCP servers, and their tools as catalog :class:`Tool` objects.

Each upstream is one domain. Its connection lives in a task of the :class:`UpstreamManager`'s task
group, so a crash, a hang or a failed start takes down that domain only: its calls fail with a
:class:`~toolmgmt_core.ToolUnavailableError` (or a ``ToolTimeoutError``) naming it, every
other domain keeps working, and the next use reconnects it. The catalog follows the upstream's
tool list: it is refreshed on ``notifications/tools/list_changed`` (or the 2026 protocol's
``subscriptions/listen`` event) and on every reconnect.

A call whose upstream asks its user something (an input-required result, 2026) is abandoned
here. Connecting an upstream and naming a failed request's fault are
:mod:`toolmgmt_mcp.transport`'s; turning its tool listing into the core's terms
:mod:`toolmgmt_mcp.convert`'s.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, TextIO

import anyio
import anyio.abc
import mcp.types as mcp_types
from mcp import Client, MCPError
from mcp_types import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmgmt_core import (
    CallContext,
    ContentResult,
    ToolCatalog,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.integration import NO_CONTEXT, describe_exception, sync_domain
from toolmgmt_mcp.convert import tools_from_listing
from toolmgmt_mcp.transport import (
    fault_error,
    list_tools,
    open_client,
    request_fault,
    stderr_stream,
)
from toolmgmt_mcp.upstream_config import UpstreamConfig

__all__ = ["Upstream", "UpstreamManager", "UpstreamStatus"]

logger = logging.getLogger("toolmgmt_mcp")


@dataclass
class UpstreamStatus:
    """What is known about one upstream."""

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


class Upstream:
    """One upstream: its configuration, its live client (if any) and the task that owns it."""

    def __init__(self, config: UpstreamConfig, manager: UpstreamManager) -> None:
        self.config = config
        self.manager = manager
        self.status = manager.status_type(config.name)
        self.client: Client | None = None
        self._stop: anyio.Event | None = None
        self._lock = anyio.Lock()
        self._failed_at = -math.inf
        self._answered_at = -math.inf
        """When the upstream last answered anything (a call, an error, a probe)."""
        self._probe_lock = anyio.Lock()

    # -- connection -------------------------------------------------------------------------

    async def _run(
        self,
        stop: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[Client] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Own the connection: open it, report it started, keep it until ``stop`` or a fault."""
        started = False
        try:
            errlog = self.manager.stderr_for
            async with open_client(self.config, self._on_message, errlog) as client:
                started = True
                self.manager.prepare(client)
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
            self._mark_down(f"connection lost: {describe_exception(exc)}")
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
            self.manager.start_soon(self.refresh)

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
                    error = f"failed to start: {describe_exception(exc)}"
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
                self._mark_down(f"listing its tools failed: {describe_exception(exc)}")
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

    def reconnect_due(self, now: float) -> bool:
        """Whether the upstream is down, its ``reconnect_delay`` over at ``now``
        (``time.monotonic()``), and nobody is connecting it."""
        due = self._failed_at + self.config.reconnect_delay <= now
        return self.client is None and due and not self._lock.locked()

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
        tools, invalid = await list_tools(client, self.config.connect_timeout)
        tools = await self.manager.admit(self, tools)
        self.manager._install(self, tools, invalid)

    def _handler(self, tool_name: str, *, unwrap: bool = False) -> Callable[..., Any]:
        async def call_upstream(
            toolmgmt_context: CallContext = NO_CONTEXT, **arguments: Any
        ) -> Any:
            value = await self.call(tool_name, arguments, toolmgmt_context)
            if unwrap and isinstance(shape := value.structured, dict) and set(shape) == {"result"}:
                return dataclasses.replace(value, structured=shape["result"])
            return value

        call_upstream.__name__ = f"{self.config.tool_prefix}{tool_name}"
        return call_upstream

    async def call(
        self, tool_name: str, arguments: dict[str, Any], context: CallContext = NO_CONTEXT
    ) -> Any:
        """Call ``tool_name`` upstream for the call of ``context``; the result value, or a
        gateway or tool error.

        A failure of this call alone (its HTTP request broke, it timed out while the upstream
        still answers) fails this call only: the connection and the calls beside it go on.
        Whether a call whose answer was lost is sent again is the core's decision.

        Raises:
            ToolAnswerLostError: the request or its answer was lost; the call may have run.
            ToolUnavailableError: the upstream is down or died during the call.
            ToolTimeoutError: no answer within the upstream's timeout (the upstream is
                restarted on its next use when it does not answer a probe either).
            ToolExecutionError: the upstream tool reported an error (``isError``) or rejected
                the call.
        """
        client = await self.connect()
        result = await self.manager.run_call(self, client, tool_name, arguments, context)
        # The core shapes it (text, structured content, media described or passed on) and
        # reports an isError result as the tool's own failure, as for any tool.
        return ContentResult.from_mcp(result.model_dump(mode="json", by_alias=True))

    async def request(
        self, client: Client, tool_name: str, arguments: dict[str, Any], **options: Any
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """One ``tools/call`` request of a call (each round of an upstream's questions is one):
        its result, or the error it ends the call with.

        Args:
            client: the live client (:meth:`connect`).
            tool_name: the tool's name upstream.
            arguments: the call's arguments.
            **options: more of the SDK's ``call_tool`` keywords (``progress_callback``,
                ``input_responses``, ``request_state``, ``meta``).
        """
        # The SDK's coroutine itself, not one of ours around it (a frame is resumed per wake-up).
        send = functools.partial(
            client.session.call_tool,
            tool_name,
            arguments,
            read_timeout_seconds=self.config.timeout,
            allow_input_required=True,
            **options,
        )
        started = time.monotonic()
        try:
            with anyio.fail_after(self.config.timeout):
                try:
                    result = await send()
                except MCPError as exc:
                    modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
                    if exc.code != HEADER_MISMATCH or not modern:
                        raise
                    # 2026: the upstream says our listing of the tool is stale (its Mcp-Param
                    # headers no longer match its schema): list again, then send once more.
                    await self._list_and_install(client)
                    result = await send()
        except Exception as exc:
            fault = request_fault(exc)
            if fault is None:
                raise
            if fault in ("ended", "rejected"):
                self._answered_at = time.monotonic()
            if isinstance(exc, MCPError) and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
                raise  # the caller's missing capability, not the upstream's fault: as it is
            alive = fault == "timeout" and await self._alive_since(client, started)
            error, down = fault_error(fault, exc, self.config, tool_name, alive=alive)
            if down is not None:
                self._mark_down(down)
            raise error from exc
        self._answered_at = time.monotonic()
        return result

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


class UpstreamManager:
    """Upstream MCP servers, each a domain, feeding one :class:`ToolCatalog`.

    Usage::

        catalog = ToolCatalog()
        async with UpstreamManager(config.upstreams, catalog) as upstreams:
            print(upstreams.status())  # which are up, their tools, what was skipped
            await catalog.get("notes_get_note").handler(title="x")

    Entering connects every upstream concurrently; one that fails to start is reported in
    :meth:`status` and retried on its next use, the others are ready. The no-op hooks below
    (:meth:`not_started`, :meth:`stderr_for`, :meth:`prepare`, :meth:`admit`, :meth:`run_call`)
    and :attr:`status_type` are what a service on top overrides (the gateway's
    ``toolmgmt_gateway.upstreams.GatewayUpstreams``: questions, pins, policy, stderr).
    """

    status_type: ClassVar[type[UpstreamStatus]] = UpstreamStatus
    """What each upstream's :meth:`status` is made of (a subclass may add fields)."""

    def __init__(
        self,
        upstreams: Sequence[UpstreamConfig],
        catalog: ToolCatalog,
        *,
        always_on: Sequence[str] = (),
    ) -> None:
        self.catalog = catalog
        self.always_on = tuple(always_on)
        """Patterns of tools always loaded in a session (set on their catalog entries)."""
        self._upstreams = {u.name: Upstream(u, self) for u in upstreams}
        self._tasks: anyio.abc.TaskGroup | None = None
        self._exit: Any = None

    @property
    def by_name(self) -> Mapping[str, Upstream]:
        """Every upstream by its name, in configuration order."""
        return MappingProxyType(self._upstreams)

    def start_soon(self, work: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``work(*args)`` in the manager's tasks, which end when it exits."""
        self._tasks_or_raise().start_soon(work, *args)

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
                upstream.status.error = self.not_started(upstream)
                if upstream.status.error is None:
                    starting.start_soon(self._connect_quietly, upstream)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        for upstream in self._upstreams.values():
            await upstream.close()
        tasks, self._tasks = self._tasks, None
        assert tasks is not None
        tasks.cancel_scope.cancel()
        await self._exit.__aexit__(*exc_info)

    # -- hooks a subclass (the gateway) overrides: no-ops here ----------------------------

    def not_started(self, upstream: Upstream) -> str | None:
        """Why ``upstream`` is not started on entering, or None (it is, here)."""
        return None

    def stderr_for(self, config: UpstreamConfig) -> TextIO:
        """Where a stdio upstream's stderr goes (ours here)."""
        return stderr_stream()

    def prepare(self, client: Client) -> None:
        """Prepare a new connection before its first request (nothing here)."""

    async def admit(self, upstream: Upstream, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """The listed tools to install (all of them here)."""
        return listed

    async def run_call(
        self,
        upstream: Upstream,
        client: Client,
        tool_name: str,
        arguments: dict[str, Any],
        context: CallContext,
    ) -> mcp_types.CallToolResult:
        """The requests of one call of ``tool_name`` (for the call of ``context``): one here,
        as nobody can answer an upstream's questions.

        Raises:
            ToolExecutionError: the upstream asked its user something.
        """
        result = await upstream.request(client, tool_name, arguments)
        if isinstance(result, mcp_types.InputRequiredResult):
            name = f"{upstream.config.tool_prefix}{tool_name}"
            raise ToolExecutionError(
                f"Upstream {upstream.config.name!r} asked its user for input during {name!r}, "
                "and nothing relays questions here (the gateway does); the call was abandoned.",
                tool_name=name,
            )
        return result

    @staticmethod
    async def _connect_quietly(upstream: Upstream) -> None:
        try:
            await upstream.connect()
        except ToolUnavailableError:
            pass  # recorded in its status; retried on the next use

    def revive_soon(self) -> None:
        """Start reconnecting every upstream that is down and due (one :meth:`not_started`
        keeps stopped stays so), without waiting for it."""
        now = time.monotonic()
        for upstream in self._upstreams.values():
            if upstream.reconnect_due(now) and self.not_started(upstream) is None:
                self.start_soon(self._connect_quietly, upstream)

    def status(self) -> list[UpstreamStatus]:
        """The state of every upstream, in configuration order."""
        return [u.status for u in self._upstreams.values()]

    def _install(
        self,
        upstream: Upstream,
        listed: list[mcp_types.Tool],
        invalid: list[tuple[str, str]] = (),  # type: ignore[assignment]
    ) -> None:
        """Bring the catalog in line with ``upstream``'s listed tools (the core decides which
        names its domain may hold)."""
        tools, skipped = tools_from_listing(
            listed, upstream.config, always_on=self.always_on, handler=upstream._handler
        )
        kept, refused = sync_domain(self.catalog, upstream.config.name, tools)
        skipped = [*invalid, *skipped, *refused]
        for item, reason in skipped:
            logger.warning("upstream %r: skipped tool %r: %s", upstream.config.name, item, reason)
        upstream.status.tools = kept
        upstream.status.skipped = skipped
