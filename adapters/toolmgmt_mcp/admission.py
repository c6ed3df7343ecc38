"""How much one replica takes on at once: beyond, 503 with ``Retry-After``, before anything runs.

A replica that accepts every request makes everyone wait once it is overloaded: 500 sessions
of one client raised another client's median latency from 10 ms to about 1 s, as every request
queued behind the others for the event loop and the store's threads. :class:`Admission` counts
the requests a replica is serving and answers one more than ``[gateway] max_requests`` (or
than its client's share, ``[gateway.clients.NAME] max_requests``, by default half the
replica's when it has two clients or more: :func:`client_shares`) with HTTP 503 at once, before
reading its body: nothing of it ran, so HAProxy may send it to another replica
(``retry-on 503``, docs/deploy.md) and a client may send it again after ``Retry-After``
seconds. A standalone stream (``GET``) is a session's, counted by ``max_sessions`` instead.

Every 503 of the gateway carries the same ``Retry-After`` (:func:`retry_after`): the
admission limit's, a session store that does not answer (:mod:`toolmgmt_mcp.conversations`),
and the SDK's own when ``max_sessions`` are open. It is tied to ``[store] timeout``: a store
that did not answer within its deadline is asked again no sooner than one deadline later.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from mcp_types import INTERNAL_ERROR

from toolmgmt_mcp.clients import CLIENT_SCOPE_KEY
from toolmgmt_mcp.config import GatewaySettings

__all__ = ["Admission", "client_shares", "retry_after"]

logger = logging.getLogger("toolmgmt_mcp")

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
    """

    def __init__(
        self,
        app: Any,
        *,
        max_requests: int,
        per_client: Mapping[str, int] | None = None,
        retry_after: int = 1,
        path: str = "/mcp",
    ) -> None:
        self.app = app
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
        if scope.get("method") == "GET":  # a session's standalone stream: max_sessions
            await self.app(scope, receive, send)
            return
        client = scope.get(CLIENT_SCOPE_KEY)
        share = self.per_client.get(client) if isinstance(client, str) else None
        full = bool(self.max_requests) and self.active >= self.max_requests
        if full or (share is not None and self.by_client[client] >= share):
            await self._refuse(send, client, share if not full else None)
            return
        self.active += 1
        if share is not None:
            self.by_client[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1
            if share is not None:
                self.by_client[client] -= 1

    def _stamped(self, send: Any) -> Any:
        """``send`` giving every 503 response this replica's ``Retry-After``."""

        async def stamped(event: Any) -> None:
            if event["type"] == "http.response.start" and event["status"] == 503:
                headers = [(k, v) for k, v in event.get("headers", []) if k != b"retry-after"]
                event = {**event, "headers": [*headers, (b"retry-after", self.retry_after)]}
            await send(event)

        return stamped

    async def _refuse(self, send: Any, client: str | None, share: int | None) -> None:
        self.refused[client or ""] += 1
        if share is not None:
            why = f"client {client!r} is at its share of this replica ({share} requests at once)"
        else:
            why = f"this replica is serving its limit of {self.max_requests} requests at once"
        self._log(why)
        message = (
            f"Service unavailable (503): {why}; nothing of this request ran. Retry in "
            f"{self.retry_after.decode()} s (another replica may take it sooner)."
        )
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR, "message": message}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _log(self, why: str) -> None:
        """One WARNING per :data:`_LOG_EVERY` seconds at most, with the count since the last."""
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= _LOG_EVERY:
            logger.warning("refused %d request(s) with 503: %s", self._unlogged, why)
            self._logged_at, self._unlogged = now, 0
