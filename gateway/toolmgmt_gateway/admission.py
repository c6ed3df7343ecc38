"""How much one replica takes on at once: beyond, 503 with ``Retry-After``, before anything runs.

A replica that accepts every request makes everyone wait once it is overloaded: 500 sessions
of one client raised another client's median latency from 10 ms to about 1 s, as every request
queued behind the others for the event loop and the store's threads. :class:`Admission` counts
the requests a replica is serving and answers one more than ``[gateway] max_requests`` (or
than its client's share, ``[gateway.clients.NAME] max_requests``, by default half the
replica's when it has two clients or more: :func:`client_shares`) with HTTP 503 at once, before
reading its body: nothing of it ran, so HAProxy may send it to another replica
(``retry-on 503``, docs/deploy.md) and a client may send it again after ``Retry-After``
seconds. A standalone stream (``GET``) is a session's, counted by ``max_sessions`` instead, and
by its client's share of them (:func:`session_shares`, ``[gateway.clients.NAME]
max_sessions``, by default an equal share of the replica's when it has two clients or more).

A share of requests in flight is not a share of the replica: a flood of short requests
(opening and closing 2025 sessions, 100 at a time) keeps its share of slots barely used while
its work fills the event loop, and another client's median went from 81 ms to 2 s. So each
client of a gateway with two clients or more also has a **share of the work**
(:func:`work_shares`, ``[gateway.clients.NAME] max_active``, by default ``max_requests // 32``,
at least 2): at most that many of its requests are being worked on by this replica at once; a
request of its past that waits for one of its own to finish (never for another client's), and
one still waiting after ``Retry-After`` seconds is refused with 503. A request waiting on its
upstream (:func:`waiting_on_upstream`, around each upstream request) or on its client's answer
gives its place back meanwhile, so slow tools do not hold a client's share of the work, only
its share of requests in flight. While another client's request is being worked on, a client
that already has one being worked on starts no other (:class:`_Work`): its running ones go on,
its next waits for the other client's to finish or wait on its upstream. On a host short of
CPU, a flood's second request beside another client's took the replica's time from it.

Every 503 of the gateway carries the same ``Retry-After`` (:func:`retry_after`): the
admission limit's, a session store that does not answer (:mod:`toolmgmt_gateway.conversations`),
and the SDK's own when ``max_sessions`` are open. It is tied to ``[store] timeout``: a store
that did not answer within its deadline is asked again no sooner than one deadline later.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from mcp_types import INTERNAL_ERROR

from toolmgmt_gateway.clients import CLIENT_SCOPE_KEY
from toolmgmt_gateway.config import GatewaySettings
from toolmgmt_gateway.responses import jsonrpc_error

__all__ = [
    "TURN_SCOPE_KEY",
    "Admission",
    "client_shares",
    "retry_after",
    "session_shares",
    "waiting_on_upstream",
    "work_shares",
]

logger = logging.getLogger("toolmgmt_mcp")

TURN_SCOPE_KEY = "toolmgmt.turn"
"""Where :class:`Admission` puts a request's place in its client's share of the work in the
ASGI scope (the gateway hands it down with the call, for :func:`waiting_on_upstream`)."""

_LOG_EVERY = 10.0
"""Seconds between two log lines about refused requests."""


def client_shares(settings: GatewaySettings) -> dict[str, int]:
    """Each client's share of a replica: its ``max_requests``, else half the replica's when
    it serves two clients or more (so that no one client can take all of it), else none."""
    default = max(1, settings.max_requests // 2) if settings.max_requests else None
    shares = {}
    for client in settings.clients:
        share = client.max_requests or (default if len(settings.clients) > 1 else None)
        if share is not None:
            shares[client.name] = share
    return shares


def session_shares(settings: GatewaySettings) -> dict[str, int]:
    """Each client's share of a replica's sessions (standalone streams): its ``max_sessions``,
    else an equal share of the replica's when it serves two clients or more, else none."""
    many = len(settings.clients) > 1
    default = max(1, settings.max_sessions // max(1, len(settings.clients)))
    return {c.name: c.max_sessions or default for c in settings.clients if c.max_sessions or many}


def work_shares(settings: GatewaySettings) -> dict[str, int]:
    """Each client's share of the work of a replica (requests being worked on at once, not
    waiting on an upstream): its ``max_active``, else ``max_requests // 32`` (at least 2) when
    the gateway serves two clients or more and ``max_requests`` limits (0: none)."""
    explicit = {c.name: c.max_active for c in settings.clients if c.max_active}
    if len(settings.clients) < 2 or not settings.max_requests:  # max_requests 0: no limit
        return explicit
    default = max(2, settings.max_requests // 32)
    return {c.name: explicit.get(c.name, default) for c in settings.clients}


class _Turn:
    """One request's place in its client's share of the work."""

    def __init__(self, limiter: anyio.CapacityLimiter, work: _Work, client: str) -> None:
        self.limiter = limiter
        self.work = work
        self.client = client
        self.held = False
        self.closed = False
        """The request is done: its place is not taken again (by a call that outlived it)."""

    async def take(self) -> None:
        if self.closed:
            return
        await self.limiter.acquire_on_behalf_of(self)
        self.taken()

    def taken(self) -> None:
        """The place is held: counted in its client's share of the work."""
        self.held = True
        self.work.held[self.client] += 1

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.limiter.release_on_behalf_of(self)
            self.work.given_back(self.client)

    def close(self) -> None:
        self.closed = True
        self.give_back()


class _Work:
    """The places held in every client's share of the work, so that a client's next request
    lets another client's request being worked on go first (:meth:`first_turn`)."""

    def __init__(self) -> None:
        self.held: Counter[str] = Counter()
        self._freed = anyio.Event()

    def given_back(self, client: str) -> None:
        self.held[client] -= 1
        self._freed.set()
        self._freed = anyio.Event()

    async def first_turn(self, turn: _Turn) -> None:
        """Take a new request's place in its client's share: while another client's request
        is being worked on, only when its client holds no other place (its running requests
        go on), so a flood works one request at a time beside another client's."""
        while True:
            others = any(n for name, n in self.held.items() if n and name != turn.client)
            if not (others and self.held[turn.client]):
                try:
                    turn.limiter.acquire_on_behalf_of_nowait(turn)
                except anyio.WouldBlock:
                    pass
                else:  # decided and taken in one step: no other waiter slips in between
                    turn.taken()
                    return
            await self._freed.wait()


@contextlib.asynccontextmanager
async def waiting_on_upstream(turn: Any = None) -> AsyncIterator[None]:
    """Around a wait on something else than this replica's work (an upstream's answer, the
    client's): the request's place in its client's share of the work (``turn``, from the
    request's scope: :data:`TURN_SCOPE_KEY`) is given back meanwhile, and taken again after
    (a no-op for a request without one)."""
    if not isinstance(turn, _Turn) or not turn.held:
        yield
        return
    turn.give_back()
    try:
        yield
    finally:
        with anyio.CancelScope(shield=True):
            await turn.take()


def retry_after(store_timeout: float) -> int:
    """The ``Retry-After`` of every 503 of the gateway: ``[store] timeout`` rounded up, at
    least 1 second."""
    return max(1, math.ceil(store_timeout))


class Admission:
    """ASGI middleware: at most ``max_requests`` requests at once on ``path`` (and at most a
    client's own share), else 503 with ``Retry-After``; every 503 behind it gets the header.

    Usage::

        app = Admission(app, max_requests=256, per_client={"batch": 32}, retry_after=2)

    Args:
        app: the app behind it.
        max_requests: requests served at once (0: no limit).
        per_client: each limited client's share, by name (``scope["toolmgmt.client"]``).
        retry_after: seconds for ``Retry-After``.
        path: the MCP endpoint; other paths (``/healthz``) pass untouched and uncounted.
        work: each client's share of the work (:func:`work_shares`), by name.
        sessions: each client's share of the standalone streams (:func:`session_shares`).
    """

    def __init__(
        self,
        app: Any,
        *,
        max_requests: int,
        per_client: Mapping[str, int] | None = None,
        retry_after: int = 1,
        path: str = "/mcp",
        work: Mapping[str, int] | None = None,
        sessions: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.sessions = dict(sessions or {})
        """Each client's share of the standalone streams (:func:`session_shares`), by name."""
        self.streams: Counter[str] = Counter()
        """Standalone streams open now, by client (limited clients only)."""
        self.work = {name: anyio.CapacityLimiter(share) for name, share in (work or {}).items()}
        """Each client's share of the work (:func:`work_shares`), by name."""
        self._working = _Work()
        self.max_requests = max_requests
        self.per_client = dict(per_client or {})
        self.retry_after = str(retry_after).encode()
        self.path = path
        self.active = 0
        """Requests being served now."""
        self.by_client: Counter[str] = Counter()
        """Requests being served now, by client (configured clients only)."""
        self.refused: Counter[str] = Counter()
        """Requests refused since the start, by client ("" for none): a metric's source."""
        self._logged_at = 0.0
        self._unlogged = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        send = self._stamped(send)
        client = scope.get(CLIENT_SCOPE_KEY)
        if scope.get("method") == "GET":  # a session's standalone stream: max_sessions
            await self._stream(scope, receive, send, client)
            return
        share = self.per_client.get(client) if isinstance(client, str) else None
        full = bool(self.max_requests) and self.active >= self.max_requests
        if full or (share is not None and self.by_client[client] >= share):
            await self._refuse(send, client, share if not full else None)
            return
        limiter = self.work.get(client) if isinstance(client, str) else None
        self.active += 1
        if share is not None:
            self.by_client[client] += 1
        try:
            if limiter is None:
                await self.app(scope, receive, send)
                return
            turn = _Turn(limiter, self._working, client)
            with anyio.move_on_after(float(self.retry_after)):
                await self._working.first_turn(turn)
            if not turn.held:  # its own work filled its share for a whole Retry-After
                await self._refuse(send, client, None, work=limiter.total_tokens)
                return
            try:
                await self.app({**scope, TURN_SCOPE_KEY: turn}, receive, send)
            finally:
                turn.close()
        finally:
            self.active -= 1
            if share is not None:
                self.by_client[client] -= 1

    async def _stream(self, scope: Any, receive: Any, send: Any, client: Any) -> None:
        share = self.sessions.get(client) if isinstance(client, str) else None
        if share is None:
            await self.app(scope, receive, send)
            return
        if self.streams[client] >= share:
            await self._refuse(send, client, None, streams=share)
            return
        self.streams[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.streams[client] -= 1

    def _stamped(self, send: Any) -> Any:
        """``send`` giving every 503 response this replica's ``Retry-After``."""

        async def stamped(event: Any) -> None:
            if event["type"] == "http.response.start" and event["status"] == 503:
                headers = [(k, v) for k, v in event.get("headers", []) if k != b"retry-after"]
                event = {**event, "headers": [*headers, (b"retry-after", self.retry_after)]}
            await send(event)

        return stamped

    async def _refuse(
        self,
        send: Any,
        client: str | None,
        share: int | None,
        *,
        work: float | None = None,
        streams: int | None = None,
    ) -> None:
        self.refused[client or ""] += 1
        if streams is not None:
            why = f"client {client!r} holds its share of this replica's sessions ({streams})"
        elif work is not None:
            why = (
                f"client {client!r} kept its share of this replica's work ({work:g} requests "
                f"worked on at once) full for {self.retry_after.decode()} s"
            )
        elif share is not None:
            why = f"client {client!r} is at its share of this replica ({share} requests at once)"
        else:
            why = f"this replica is serving its limit of {self.max_requests} requests at once"
        self._log(why, client)
        message = (
            f"Service unavailable (503): {why}; nothing of this request ran. Retry in "
            f"{self.retry_after.decode()} s (another replica may take it sooner)."
        )
        await jsonrpc_error(send, 503, INTERNAL_ERROR, message)

    def _log(self, why: str, client: str | None) -> None:
        """One WARNING per :data:`_LOG_EVERY` seconds at most, with the count since the last
        (naming the client of the last, for :class:`~toolmgmt_gateway.clients.ClientLogFilter`)."""
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= _LOG_EVERY:
            logger.warning(
                "refused %d request(s) with 503: %s", self._unlogged, why, extra={"client": client}
            )
            self._logged_at, self._unlogged = now, 0
