"""The gateway's upstreams: the MCP adapter's :class:`~toolmgmt_mcp.UpstreamManager` plus what
only a gateway does with them.

- **Questions**: a call whose upstream asks its user something (an input-required result, 2026)
  goes round by round through the relay of the client that made it
  (:mod:`toolmgmt_gateway.questions`), each round within the upstream's ``timeout``.
- **Pins**: a tool whose definition changed since it was first seen is held back (quarantined)
  until an operator trusts it (``toolmgmt catalog trust NAME``).
- **Policy**: an upstream whose every tool the gateway's policy hides is never started, and no
  call of a name the policy hides ever starts or restarts an upstream: such a name answers
  exactly as an unknown one.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp.types as mcp_types
from mcp import Client, MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY
from toolmgmt_mcp.upstreams import Upstream, UpstreamManager

from toolmgmt_core import (
    PolicyView,
    StoreError,
    ToolCatalog,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.integration import (
    ACCEPTED,
    QUARANTINED,
    SAME,
    CallContext,
    MemoryPins,
    PinStore,
    PinVerdict,
    fold_name,
    pin_definition,
    pin_digest,
)
from toolmgmt_gateway.admission import waiting_on_upstream
from toolmgmt_gateway.config import GatewayConfig
from toolmgmt_gateway.questions import (
    MAX_ROUNDS,
    MissingCapability,
    Relay,
    attribute_questions,
    callers_capabilities,
    forward_capabilities,
)

__all__ = ["GatewayUpstreams", "PIN_RECHECK"]

logger = logging.getLogger("toolmgmt_mcp")

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
        self.pins: PinStore = pins if pins is not None else MemoryPins()
        """Where the upstream tools' pins live (the catalog store's, for replicas)."""
        self.pin_changes: Counter[tuple[str, str]] = Counter()
        """(upstream, ``accepted`` or ``quarantined``) -> changes of pinned tools seen."""
        self.on_pin_change = on_pin_change
        """Called with (upstream, outcome) for each change (a metric)."""
        self._in_effect: dict[str, str] = {}
        """Gateway name -> the digest in effect, for when the pin store cannot be reached."""

    def _started(self, tasks: anyio.abc.TaskGroup) -> None:
        tasks.start_soon(self._recheck_loop)

    def _opened(self, client: Client) -> None:
        forward_capabilities(client)

    def _waiting(self, context: CallContext) -> AbstractAsyncContextManager[Any]:
        # The request's place in its client's share of the work is given back meanwhile.
        return waiting_on_upstream(getattr(context.relay, "turn", None))

    async def _ask_through(
        self,
        upstream: Upstream,
        client: Client,
        tool_name: str,
        arguments: dict[str, Any],
        context: CallContext,
    ) -> mcp_types.CallToolResult:
        gateway_name = f"{upstream.config.tool_prefix}{tool_name}"
        callers = context.relay if isinstance(context.relay, Relay) else None
        relay = callers or Relay()
        # A 2026 upstream learns the capabilities of the client the call is made for.
        meta = callers_capabilities(client, callers)
        name = upstream.config.name
        responses, state = relay.resume(name, tool_name)
        for _ in range(MAX_ROUNDS):
            try:
                result = await upstream._round(
                    client, tool_name, arguments, responses, state, context, meta
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
            responses = await relay.answer(name, tool_name, result)
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
        self, upstream: Upstream, listed: list[mcp_types.Tool]
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
                lambda: self.pins.check(
                    config.name, definitions, accept=self._settings[config.name].accept_changes
                )
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

    async def _trusted_since(self, upstream: Upstream, name: str) -> bool:
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

def _quarantine_message(upstream: str, name: str, verdict: PinVerdict) -> str:
    lowered = f"; it lowers a guard: {', '.join(verdict.lowered)}" if verdict.lowered else ""
    changed = ", ".join(verdict.changed) or "its definition"
    return (
        f"Tool {name!r} of upstream {upstream!r} is quarantined: its {changed} changed since "
        f"it was first seen{lowered}. It is neither listed nor run until an operator reviews "
        f"the change and accepts it with: toolmgmt catalog trust {name} --config <gateway "
        "config>. Use another tool meanwhile."
    )
