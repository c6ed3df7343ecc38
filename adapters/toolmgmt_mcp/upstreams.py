"""Connections to upstream MCP servers, and their tools as catalog :class:`Tool` objects.

Each upstream is one domain. Its connection lives in a task of the :class:`UpstreamManager`'s task
group, so a crash, a hang or a failed start takes down that domain only: its calls fail with a
:class:`~toolmgmt_core.ToolUnavailableError` (or a ``ToolTimeoutError``) naming it, every
other domain keeps working, and the next use reconnects it. The catalog follows the upstream's
tool list: it is refreshed on ``notifications/tools/list_changed`` (or the 2026 protocol's
``subscriptions/listen`` event) and on every reconnect.

A call whose upstream asks its user something (an input-required result, 2026) goes round by
round through the relay of the client that made it (:mod:`toolmgmt_mcp.questions`), each round
within the upstream's ``timeout``. Connecting an upstream and naming a failed request's fault are
:mod:`toolmgmt_mcp.transport`'s; turning its tool listing and call results into the core's terms
:mod:`toolmgmt_mcp.convert`'s.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp.types as mcp_types
from mcp import Client, MCPError
from mcp_types import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmgmt_core.calls.context import NO_CONTEXT, CallContext
from toolmgmt_core.catalog.pins import (
    ACCEPTED,
    QUARANTINED,
    SAME,
    MemoryPins,
    PinStore,
    PinVerdict,
    pin_definition,
    pin_digest,
)
from toolmgmt_core.catalog.tool_catalog import ToolCatalog
from toolmgmt_core.model.content import ContentResult
from toolmgmt_core.model.errors import (
    CatalogError,
    StoreError,
    ToolCallError,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.model.names import fold_name
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_mcp.admission import waiting_on_upstream
from toolmgmt_mcp.config import GatewayConfig, UpstreamConfig
from toolmgmt_mcp.convert import (
    progress_callback,
    tools_from_listing,
)
from toolmgmt_mcp.questions import (
    MAX_ROUNDS,
    MissingCapability,
    Relay,
    attribute_questions,
    callers_capabilities,
    forward_capabilities,
)
from toolmgmt_mcp.transport import describe, fault_error, list_tools, open_client, request_fault

__all__ = ["PIN_RECHECK", "UpstreamManager", "UpstreamStatus"]

logger = logging.getLogger("toolmgmt_mcp")

PIN_RECHECK = 5.0
"""Seconds between two listings of an upstream holding tools back (an operator's trust is
taken within them, or at once on the tool's next call)."""


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
    quarantined: dict[str, str] = field(default_factory=dict)
    """Gateway name -> why, for each tool held back since its definition changed after it was
    pinned (until ``toolmgmt catalog trust NAME``)."""


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
        self.held: dict[str, str] = {}
        """Gateway name -> the digest of the definition held back."""
        self._retry_safe: set[str] = set()
        """Upstream tool names annotated read-only or idempotent: a lost call may be resent."""

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
            async with open_client(self.config, self._on_message) as client:
                started = True
                forward_capabilities(client)
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
            self._mark_down(f"connection lost: {describe(exc)}")
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
                    error = f"failed to start: {describe(exc)}"
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
                self._mark_down(f"listing its tools failed: {describe(exc)}")
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
        tools, invalid = await list_tools(client, self.config.connect_timeout)
        tools = await self.manager._pinned(self, tools)
        self.manager._install(self, tools, invalid)

    def to_tools(self, listed: list[mcp_types.Tool]) -> tuple[list[Tool], list[tuple[str, str]]]:
        """Catalog tools for the upstream's listed tools, and the ones skipped with the reason."""
        self._retry_safe = {
            item.name
            for item in listed
            if item.annotations
            and (item.annotations.read_only_hint or item.annotations.idempotent_hint)
        }
        return tools_from_listing(
            listed,
            self.config,
            always_on=self.manager.config.gateway.always_on,
            handler=self._handler,
        )

    def _handler(self, tool_name: str, *, unwrap: bool = False) -> Callable[..., Any]:
        async def call_upstream(
            toolmgmt_context: CallContext = NO_CONTEXT, **arguments: Any
        ) -> Any:
            value = await self.call(tool_name, arguments, toolmgmt_context)
            structured = value.structured
            if unwrap and isinstance(structured, dict) and set(structured) == {"result"}:
                return dataclasses.replace(value, structured=structured["result"])
            return value

        call_upstream.__name__ = f"{self.config.tool_prefix}{tool_name}"
        return call_upstream

    async def call(
        self, tool_name: str, arguments: dict[str, Any], context: CallContext = NO_CONTEXT
    ) -> Any:
        """Call ``tool_name`` upstream; the result value, or a gateway or tool error. Its
        progress goes to ``context.progress`` (the client's request, at the gateway).

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
                return await self._call_once(tool_name, arguments, context)
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

    async def _call_once(
        self, tool_name: str, arguments: dict[str, Any], context: CallContext
    ) -> Any:
        gateway_name = f"{self.config.tool_prefix}{tool_name}"
        client = await self.connect()
        relay = context.relay if isinstance(context.relay, Relay) else Relay()
        upstream = self.config.name
        responses, state = relay.resume(upstream, tool_name)
        for _ in range(MAX_ROUNDS):
            result = await self._round(client, tool_name, arguments, responses, state, context)
            if not isinstance(result, mcp_types.InputRequiredResult):
                break
            # The upstream asks its user: the relay asks the client (or ends the call with
            # the questions, for a 2026 client), and the call goes on with the answers.
            result = attribute_questions(
                upstream,
                gateway_name,
                result,
                allow_secrets=self.config.allow_secret_questions,
            )
            responses = await relay.answer(upstream, tool_name, result)
            state = result.request_state
        else:
            raise ToolExecutionError(
                f"Upstream {upstream!r} was still asking for input after {MAX_ROUNDS} rounds of "
                f"{gateway_name!r}; the call was abandoned.",
                tool_name=gateway_name,
            )
        # The core shapes it (text, structured content, media described or passed on) and
        # reports an isError result as the tool's own failure, as for any tool.
        return ContentResult.from_mcp(result.model_dump(mode="json", by_alias=True))

    async def _round(
        self,
        client: Client,
        tool_name: str,
        arguments: dict[str, Any],
        responses: Any,
        state: str | None,
        context: CallContext,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """One request of a call (each round of questions is one): its result, or the error it
        ends the call with."""
        timeout = self.config.timeout
        started = time.monotonic()
        try:
            with anyio.fail_after(timeout):
                # Not this replica's work meanwhile: the request's place is given back.
                async with waiting_on_upstream(getattr(context.relay, "turn", None)):
                    result = await self._send(
                        client, tool_name, arguments, responses, state, context
                    )
        except Exception as exc:
            fault = request_fault(exc)
            if fault is None:
                raise
            if fault in ("ended", "rejected"):
                self._answered_at = time.monotonic()
            if isinstance(exc, MCPError) and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
                # The upstream needs a capability the client did not declare: the client's
                # error to see as it is (a 2026 client gets -32021, HTTP 400).
                raise MissingCapability(exc.error.message, exc.error.data) from exc
            alive = fault == "timeout" and await self._alive_since(client, started)
            error, down = fault_error(fault, exc, self.config, tool_name, alive=alive)
            if down is not None:
                self._mark_down(down)
            if fault == "lost":
                raise _LostAnswer(error) from exc
            raise error from exc
        self._answered_at = time.monotonic()
        return result

    async def _send(
        self,
        client: Client,
        tool_name: str,
        arguments: dict[str, Any],
        responses: Any,
        state: str | None,
        context: CallContext,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        timeout = self.config.timeout

        async def send() -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
            return await client.session.call_tool(
                tool_name,
                arguments,
                read_timeout_seconds=timeout,
                progress_callback=progress_callback(context.progress),
                meta=callers_capabilities(client, context.relay),
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        try:
            return await send()
        except MCPError as exc:
            if (
                exc.code != HEADER_MISMATCH
                or client.protocol_version not in MODERN_PROTOCOL_VERSIONS
            ):
                raise
            # 2026: the upstream says our listing of the tool is stale (its Mcp-Param headers
            # no longer match its schema): list again, then send once more (the spec's way).
            await self._list_and_install(client)
            return await send()

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

    def __init__(self, error: ToolCallError) -> None:
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
        self,
        config: GatewayConfig,
        catalog: ToolCatalog,
        policy: PolicyView | Sequence[PolicyView] | None = None,
        *,
        pins: PinStore | None = None,
        on_pin_change: Callable[[str, str], None] | None = None,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.policies: tuple[PolicyView, ...] | None = (
            None
            if policy is None
            else (policy,)
            if isinstance(policy, PolicyView)
            else tuple(policy)
        )
        """The gateway's policy views (one per client of a shared gateway: an upstream starts
        when any of them could show one of its tools), or None (every upstream may start)."""
        self._upstreams = {u.name: _Upstream(u, self) for u in config.upstreams}
        self.pins: PinStore = pins if pins is not None else MemoryPins()
        """Where the upstream tools' pins live (the catalog store's, for replicas)."""
        self.pin_changes: Counter[tuple[str, str]] = Counter()
        """(upstream, ``accepted`` or ``quarantined``) -> changes of pinned tools seen."""
        self.on_pin_change = on_pin_change
        """Called with (upstream, outcome) for each change (a metric)."""
        self._in_effect: dict[str, str] = {}
        """Gateway name -> the digest in effect, for when the pin store cannot be reached."""
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
        self._tasks.start_soon(self._recheck_loop)
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

    def _may_show(
        self,
        upstream: _Upstream,
        tool_name: str | None = None,
        policy: PolicyView | None = None,
    ) -> bool:
        """Whether ``policy`` (else any of the gateway's) could show ``tool_name`` (any tool of
        ``upstream`` when None)."""
        views = (policy,) if policy is not None else self.policies
        if views is None:
            return True
        config = upstream.config
        return any(
            view.may_show(
                config.name, tool_name, name_prefix=config.tool_prefix, profiles=config.profiles
            )
            for view in views
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

    async def ensure_for(self, tool_name: str, policy: PolicyView | None = None) -> None:
        """Before calling ``tool_name``: reconnect its upstream when it is down.

        A tool whose upstream failed to start is not in the catalog yet; this finds the upstream
        by the name's domain prefix (names compared folded, as lookup does) and connects it, so
        the call either works or fails with an error that names the upstream instead of
        "unknown tool". A name the policy hides never starts anything: its call is answered as
        an unknown name, and the upstream stays as it is. ``policy``: the caller's view (a
        client's), else the gateway's.

        Raises:
            ToolUnavailableError: the upstream is still down.
        """
        if self.catalog.find(tool_name) is not None:
            return
        folded = fold_name(tool_name)
        await self._check_quarantine(tool_name, folded, policy)
        by_prefix = sorted(self._upstreams.values(), key=lambda u: -len(u.config.tool_prefix))
        for upstream in by_prefix:
            prefix = fold_name(upstream.config.tool_prefix)
            if prefix and folded.startswith(prefix) and upstream.client is None:
                if self._may_show(upstream, tool_name, policy):
                    await upstream.connect()
                return

    # -- pins -----------------------------------------------------------------------------

    async def _pinned(
        self, upstream: _Upstream, listed: list[mcp_types.Tool]
    ) -> list[mcp_types.Tool]:
        """The listed tools whose definition is pinned (or accepted); the others held back in
        ``upstream.status.quarantined``, logged and counted."""
        config = upstream.config
        definitions = {
            f"{config.tool_prefix}{item.name}": pin_definition(
                item.description,
                item.input_schema,
                item.annotations.model_dump(by_alias=True, exclude_none=True)
                if item.annotations
                else None,
                item.title,
            )
            for item in listed
        }
        try:
            verdicts = await anyio.to_thread.run_sync(
                lambda: self.pins.check(config.name, definitions, accept=config.accept_changes)
            )
        except StoreError as exc:  # judged against what this process had in effect
            logger.error("upstream %r: the pin store failed (%s); tools whose definition "
                         "changed since this replica last listed them are held back", config.name,
                         exc)
            verdicts = self._pinned_here(definitions)
        else:
            self._in_effect.update(
                (name, pin_digest(definitions[name]))
                for name, v in verdicts.items()
                if v.state != QUARANTINED
            )
        quarantined: dict[str, str] = {}
        for name, verdict in verdicts.items():
            if verdict.state == ACCEPTED:
                self._pin_changed(config.name, ACCEPTED)
                logger.warning(
                    "upstream %r: tool %r changed (%s) and was accepted (accept_changes)",
                    config.name, name, ", ".join(verdict.changed) or "its definition",
                )
            elif verdict.state == QUARANTINED:
                quarantined[name] = _quarantine_message(config.name, name, verdict)
                upstream.held[name] = pin_digest(definitions[name])
                if name not in upstream.status.quarantined:
                    self._pin_changed(config.name, QUARANTINED)
                    logger.warning("upstream %r: %s", config.name, quarantined[name])
        upstream.status.quarantined = quarantined
        prefix = config.tool_prefix
        return [item for item in listed if f"{prefix}{item.name}" not in quarantined]

    def _pinned_here(self, definitions: dict[str, dict[str, Any]]) -> dict[str, PinVerdict]:
        verdicts = {}
        for name, definition in definitions.items():
            digest = pin_digest(definition)
            if self._in_effect.get(name, digest) == digest:
                verdicts[name] = PinVerdict(name, SAME)
            else:
                verdicts[name] = PinVerdict(name, QUARANTINED, ("definition",))
        return verdicts

    def _pin_changed(self, upstream: str, outcome: str) -> None:
        self.pin_changes[(upstream, outcome)] += 1
        if self.on_pin_change is not None:
            self.on_pin_change(upstream, outcome)

    async def _check_quarantine(
        self, tool_name: str, folded: str, policy: PolicyView | None
    ) -> None:
        """A held-back tool's call: listed again at once when an operator trusted it since,
        else refused naming the operator's command (only for a name the caller may see)."""
        for upstream in self._upstreams.values():
            held = {fold_name(n): n for n in upstream.status.quarantined}
            name = held.get(folded)
            if name is None or not self._may_show(upstream, name, policy):
                continue
            if upstream.client is not None and await self._trusted_since(upstream, name):
                await upstream.refresh()  # the listing installs it
            message = upstream.status.quarantined.get(name)
            if message is not None:
                raise ToolUnavailableError(message, tool_name=name)
            return

    async def _recheck_loop(self) -> None:
        while True:
            await anyio.sleep(PIN_RECHECK)
            try:
                await self.recheck_quarantined()
            except Exception as exc:  # a failed listing is the upstream's, said there
                logger.debug("rechecking quarantined tools failed: %s", exc)

    async def _trusted_since(self, upstream: _Upstream, name: str) -> bool:
        """Whether the pin of ``name`` is now the definition held back (one row read)."""
        try:
            pins = await anyio.to_thread.run_sync(lambda: self.pins.get([name]))
        except StoreError:
            return False
        pin = pins.get(name)
        return pin is not None and pin.digest == upstream.held.get(name)

    async def recheck_quarantined(self) -> None:
        """List again each upstream holding back a tool an operator trusted meanwhile."""
        for upstream in self._upstreams.values():
            if upstream.client is None:
                continue
            for name in list(upstream.status.quarantined):
                if await self._trusted_since(upstream, name):
                    await upstream.refresh()
                    break

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


def _quarantine_message(upstream: str, name: str, verdict: PinVerdict) -> str:
    lowered = f"; it lowers a guard: {', '.join(verdict.lowered)}" if verdict.lowered else ""
    changed = ", ".join(verdict.changed) or "its definition"
    return (
        f"Tool {name!r} of upstream {upstream!r} is quarantined: its {changed} changed since "
        f"it was first seen{lowered}. It is neither listed nor run until an operator reviews "
        f"the change and accepts it with: toolmgmt catalog trust {name} --config <gateway "
        "config>. Use another tool meanwhile."
    )
