"""The gateway's upstreams: the MCP adapter's :class:`~toolmgmt_mcp.UpstreamManager` with its
hooks overridden by what only a gateway does with them.

- **Questions and progress**: a call whose upstream asks its user something (an input-required
  result, 2026) goes round by round through the relay of the client that made it
  (:mod:`toolmgmt_gateway.questions`), each round within the upstream's ``timeout``; its
  progress notifications go to the client's request; while it waits on the upstream, the
  request's place in its client's share of the work is given back
  (:mod:`toolmgmt_gateway.admission`).
- **Pins**: a tool whose definition changed since it was first seen is held back (quarantined)
  until an operator trusts it (``toolmgmt catalog trust NAME``; :mod:`toolmgmt_gateway.pins`).
- **Policy**: an upstream whose every tool the gateway's policy hides is never started, and no
  call of a name the policy hides ever starts or restarts an upstream: such a name answers
  exactly as an unknown one.
- **Stderr**: a stdio upstream's lines after its name, or dropped
  (:mod:`toolmgmt_gateway.upstream_stderr`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TextIO, cast

import anyio
import mcp.types as mcp_types
from mcp import Client, MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY
from toolmgmt_mcp import UpstreamConfig as AdapterUpstreamConfig
from toolmgmt_mcp.upstreams import Upstream, UpstreamManager

from toolmgmt_core import (
    CallContext,
    PolicyView,
    ToolCatalog,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.integration import MemoryPins, PinStore, Slot, fold_name
from toolmgmt_gateway.admission import waiting_on_upstream
from toolmgmt_gateway.config import GatewayConfig
from toolmgmt_gateway.pins import UpstreamPins, UpstreamStatus
from toolmgmt_gateway.questions import (
    MAX_ROUNDS,
    MissingCapability,
    Relay,
    attribute_questions,
    callers_capabilities,
    forward_capabilities,
)
from toolmgmt_gateway.upstream_stderr import upstream_errlog

__all__ = ["GatewayUpstreams", "PIN_RECHECK", "PROGRESS", "RELAY", "UpstreamStatus"]

logger = logging.getLogger("toolmgmt_mcp")

RELAY: Slot[Relay] = Slot("gateway relay")
"""A call's slot for how an upstream's questions reach its client (the request's ``Relay``)."""
PROGRESS: Slot[Callable[..., Awaitable[None]]] = Slot("gateway progress")
"""A call's slot for where an upstream's progress notifications go (the client's request)."""

PIN_RECHECK = 5.0
"""Seconds between two listings of an upstream holding tools back (an operator's trust is
taken within them, or at once on the tool's next call)."""


class GatewayUpstreams(UpstreamManager):
    """Every upstream of a gateway configuration, feeding one :class:`ToolCatalog`.

    Usage::

        catalog = ToolCatalog()
        async with GatewayUpstreams(config, catalog) as upstreams:
            print(upstreams.status())  # which are up, their tools, what was skipped
            await catalog.get("notes_get_note").handler(title="x")

    With a ``policy`` (the gateway's view, or one per client of a shared gateway), an upstream
    whose every tool the policy hides is never started (see the module's docstring).
    """

    status_type = UpstreamStatus

    def __init__(
        self,
        config: GatewayConfig,
        catalog: ToolCatalog,
        policy: PolicyView | Sequence[PolicyView] | None = None,
        *,
        pins: PinStore | None = None,
        on_pin_change: Callable[[str, str], None] | None = None,
    ) -> None:
        super().__init__(config.upstreams, catalog, always_on=config.gateway.always_on)
        self.config = config
        self._settings = {u.name: u for u in config.upstreams}
        """Upstream name -> its gateway settings (the adapter's and what the gateway adds)."""
        self.policies: tuple[PolicyView, ...] | None = (
            None
            if policy is None
            else (policy,)
            if isinstance(policy, PolicyView)
            else tuple(policy)
        )
        """The gateway's policy views (one per client of a shared gateway: an upstream starts
        when any of them could show one of its tools), or None (every upstream may start)."""
        self.pinning = UpstreamPins(
            pins if pins is not None else MemoryPins(),
            on_pin_change,
            {u.name: u.tool_prefix for u in config.upstreams},
        )
        """The upstream tools' pins (the catalog store's, for replicas) and their changes."""
        self.pins: PinStore = self.pinning.store
        """Where the pins live (``pinning.store``; the gateway closes it when it stops)."""
        self.pin_changes = self.pinning.changes
        """(upstream, ``accepted`` or ``quarantined``) -> changes of pinned tools seen."""

    async def __aenter__(self) -> GatewayUpstreams:
        await super().__aenter__()
        self.start_soon(self._recheck_loop)
        return self

    # -- the adapter's hooks ----------------------------------------------------------------

    def not_started(self, upstream: Upstream) -> str | None:
        if self._may_show(upstream):
            return None
        return "not started: the gateway's policy hides every tool of this domain"

    def stderr_for(self, config: AdapterUpstreamConfig) -> TextIO:
        return upstream_errlog(config.name, self._settings[config.name].stderr)

    def prepare(self, client: Client) -> None:
        forward_capabilities(client)

    async def admit(self, upstream: Upstream, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        settings = self._settings[upstream.config.name]
        return await self.pinning.judge(settings, listed, _status(upstream))

    async def run_call(
        self,
        upstream: Upstream,
        client: Client,
        tool_name: str,
        arguments: dict[str, Any],
        context: CallContext,
    ) -> mcp_types.CallToolResult:
        gateway_name = f"{upstream.config.tool_prefix}{tool_name}"
        carried = context.get(RELAY)
        callers = carried if isinstance(carried, Relay) else None
        relay = callers or Relay()
        # A 2026 upstream learns the capabilities of the client the call is made for; the
        # call's progress goes to the client's request.
        meta = callers_capabilities(client, callers)
        progress = _progress_relay(context.get(PROGRESS))
        turn = getattr(carried, "turn", None)
        name = upstream.config.name
        responses, state = relay.resume(name, tool_name, arguments)
        for _ in range(MAX_ROUNDS):
            try:
                # Not this replica's work meanwhile: the request's place in its client's share
                # of the work is given back.
                async with waiting_on_upstream(turn):
                    result = await upstream.request(
                        client,
                        tool_name,
                        arguments,
                        progress_callback=progress,
                        meta=meta,
                        input_responses=responses,
                        request_state=state,
                    )
            except MCPError as exc:
                if exc.code != MISSING_REQUIRED_CLIENT_CAPABILITY:
                    raise
                # The upstream needs a capability the client did not declare: the client's
                # error to see as it is (a 2026 client gets -32021, HTTP 400).
                raise MissingCapability(exc.error.message, exc.error.data) from exc
            if not isinstance(result, mcp_types.InputRequiredResult):
                return result
            # The upstream asks its user: the relay asks the client (or ends the call with
            # the questions, for a 2026 client), and the call goes on with the answers.
            result = attribute_questions(
                name,
                gateway_name,
                result,
                allow_secrets=self._settings[name].allow_secret_questions,
            )
            responses = await relay.answer(name, tool_name, result, arguments)
            state = result.request_state
        raise ToolExecutionError(
            f"Upstream {name!r} was still asking for input after {MAX_ROUNDS} rounds of "
            f"{gateway_name!r}; the call was abandoned.",
            tool_name=gateway_name,
        )

    def _may_show(
        self,
        upstream: Upstream,
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
        by_prefix = sorted(self.by_name.values(), key=lambda u: -len(u.config.tool_prefix))
        for upstream in by_prefix:
            prefix = fold_name(upstream.config.tool_prefix)
            if prefix and folded.startswith(prefix) and upstream.client is None:
                if self._may_show(upstream, tool_name, policy):
                    await upstream.connect()
                return

    # -- pins -----------------------------------------------------------------------------

    async def _check_quarantine(
        self, tool_name: str, folded: str, policy: PolicyView | None
    ) -> None:
        """A held-back tool's call: listed again at once when an operator trusted it since,
        else refused naming the operator's command (only for a name the caller may see)."""
        for upstream in self.by_name.values():
            quarantined = _status(upstream).quarantined
            name = {fold_name(n): n for n in quarantined}.get(folded)
            if name is None or not self._may_show(upstream, name, policy):
                continue
            if upstream.client is not None and await self._trusted_since(upstream, name):
                await upstream.refresh()  # the listing installs it
            message = _status(upstream).quarantined.get(name)
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

    async def _trusted_since(self, upstream: Upstream, name: str) -> bool:
        return await self.pinning.trusted_since(upstream.config.name, name)

    async def recheck_quarantined(self) -> None:
        """List again each upstream holding back a tool an operator trusted meanwhile."""
        for upstream in self.by_name.values():
            if upstream.client is None:
                continue
            for name in list(_status(upstream).quarantined):
                if await self._trusted_since(upstream, name):
                    await upstream.refresh()
                    break


def _status(upstream: Upstream) -> UpstreamStatus:
    return cast(UpstreamStatus, upstream.status)  # GatewayUpstreams.status_type


def _progress_relay(report: Callable[..., Awaitable[None]] | None) -> Any:
    """The SDK progress callback relaying one upstream call's progress to ``report`` (the
    gateway request's ``report_progress``, carried by the call's context), or None."""
    if report is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        try:
            await report(progress, total, message)
        except Exception as exc:  # a client that went away must not fail the call
            logger.debug("progress not relayed: %s", exc)

    return forward
