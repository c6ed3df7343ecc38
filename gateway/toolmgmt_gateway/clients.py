"""Who is calling: one bearer token per client of a shared gateway (``[gateway.clients.NAME]``).

A gateway shared by several agents gives each its own token, its own profile and, optionally, a
deny list of its own (:class:`~toolmgmt_gateway.config.ClientConfig`). :class:`ClientAuth` answers
every HTTP request without a known token with 401, and names the client of every other one:

- in the ASGI scope (``scope["toolmgmt.client"]``), where the gateway finds the client's own
  :class:`~toolmgmt_core.ToolManager` (its profile and deny), the admission limit
  (:mod:`toolmgmt_gateway.admission`) its share, and the conversations their key;
- as the Starlette user (``scope["user"]``, an MCP SDK ``AuthenticatedUser``), so that the SDK
  binds each of its in-process sessions to the client that opened it: another client's token
  with that session id gets the SDK's 404, as an unknown id does;
- nowhere else: the gateway reads it from the scope (:func:`scope_client`) and passes it on
  where it is used, to the request's metrics and span, to the call's
  :class:`~toolmgmt_core.CallContext`, and to the log lines of the request
  (``extra={"client": name}``, which :class:`ClientLogFilter` renders).

Tokens are compared in constant time: the SHA-256 of the presented token against every client's,
with :func:`hmac.compare_digest`, all of them each time, so neither the time taken nor the order
of the clients says how close a guess came or whose token it matched. A conversation is keyed by
its client's name (:func:`request_principal`), not by the token.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from toolmgmt_gateway.responses import JSON, respond

__all__ = [
    "CLIENT_SCOPE_KEY",
    "BearerTokenMiddleware",
    "ClientAuth",
    "ClientLogFilter",
    "request_principal",
    "scope_client",
]

logger = logging.getLogger("toolmgmt_mcp")

CLIENT_SCOPE_KEY = "toolmgmt.client"
"""Where :class:`ClientAuth` puts the name of the request's client in the ASGI scope."""

_REFUSAL_LOG_EVERY = 10.0
"""Seconds between two log lines about refused tokens (an attacker cannot flood the log)."""


def scope_client(scope: Mapping[str, Any]) -> str | None:
    """The name of the client whose request ``scope`` is (an ASGI scope :class:`ClientAuth`
    named), or None: stdio, a gateway without ``[gateway.clients]``, its one token."""
    client = scope.get(CLIENT_SCOPE_KEY)
    return client if isinstance(client, str) else None


def request_principal(scope: Mapping[str, Any], authorization: str) -> str:
    """Who a request speaks for, as conversations are keyed: ``client:<name>`` for a
    configured client (whatever token it used), else its ``Authorization`` header."""
    client = scope_client(scope)
    return f"client:{client}" if client is not None else authorization


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


class ClientAuth:
    """ASGI middleware: a known bearer token or 401, and the request's client named.

    Usage::

        app = ClientAuth(app, {"support": support_token, "ops": ops_token},
                         open_paths=("/healthz",))

    Args:
        app: the app behind it.
        tokens: each client's token by name; the name ``""`` is the gateway's one token
            (``[gateway] token``): checked the same way, but naming no client.
        open_paths: paths served without a token (a health check).
    """

    def __init__(
        self, app: Any, tokens: Mapping[str, str], *, open_paths: tuple[str, ...] = ()
    ) -> None:
        from toolmgmt_core import ConfigError

        if not tokens or not all(tokens.values()):
            raise ConfigError("The gateway's bearer tokens must not be empty.")
        self.app = app
        self._clients = [(name, _digest(token.encode())) for name, token in tokens.items()]
        self._open = frozenset(open_paths)
        self.refused = 0
        """Requests refused for want of a known token, since the start."""
        self._logged_at = 0.0
        self._logged_count = 0

    def identify(self, authorization: bytes) -> str | None:
        """The name of the client whose token ``authorization`` (``Bearer <token>``) carries,
        or None; every client's digest is compared, in constant time each."""
        scheme, _, token = authorization.partition(b" ")
        if scheme.lower() != b"bearer":
            return None
        given = _digest(token.strip())
        found: str | None = None
        for name, expected in self._clients:
            if hmac.compare_digest(given, expected):
                found = name
        return found

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") in self._open:
            await self.app(scope, receive, send)
            return
        authorization = dict(scope.get("headers") or ()).get(b"authorization", b"")
        client = self.identify(authorization)
        if client is None:
            self._note_refusal(scope)
            await _unauthorized(send)
            return
        if not client:  # the gateway's one token: nobody in particular
            await self.app(scope, receive, send)
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        user = AuthenticatedUser(AccessToken(token="", client_id=client, scopes=[]))
        await self.app({**scope, CLIENT_SCOPE_KEY: client, "user": user}, receive, send)

    def _note_refusal(self, scope: Any) -> None:
        self.refused += 1
        self._logged_count += 1
        now = time.monotonic()
        if now - self._logged_at >= _REFUSAL_LOG_EVERY:
            peer = scope.get("client") or ("?", 0)
            logger.warning(
                "refused %d request(s) without a known bearer token (401), the last from %s",
                self._logged_count,
                peer[0],
            )
            self._logged_at, self._logged_count = now, 0


class BearerTokenMiddleware(ClientAuth):
    """ASGI middleware refusing HTTP requests without ``Authorization: Bearer <token>`` (401),
    except on ``open_paths`` (a health check): the gateway's one token, naming no client."""

    def __init__(self, app: Any, token: str, *, open_paths: tuple[str, ...] = ()) -> None:
        super().__init__(app, {"": token}, open_paths=open_paths)


async def _unauthorized(send: Any) -> None:
    body = json.dumps(
        {"error": "unauthorized", "message": "A valid bearer token is required."}
    ).encode()
    realm = (b"www-authenticate", b'Bearer realm="toolmgmt-gateway"')
    await respond(send, 401, body, [*JSON, realm])


class ClientLogFilter(logging.Filter):
    """Gives every record it sees ``client`` (the name, or "") and ``client_note``
    (``client NAME: `` or ""), for a handler's format: ``"%(name)s: %(client_note)s%(message)s"``.

    The name is the one a log call passed about the request it serves, ``extra={"client":
    name}``; a record without one (a line about an upstream, the store, the replica) names
    nobody.

    Usage::

        handler.addFilter(ClientLogFilter())
        logger.warning("could not ...: %s", exc, extra={"client": scope_client(scope)})
    """

    def filter(self, record: logging.LogRecord) -> bool:
        client = getattr(record, "client", None)
        client = client if isinstance(client, str) else None
        record.client = client or ""
        record.client_note = f"client {client}: " if client else ""
        return True
