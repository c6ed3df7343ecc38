"""Conversations that outlive the replica serving them: the gateway's own ``Mcp-Session-Id``.

With a session store (``[store] sessions``), every replica serves the SDK's *stateless* HTTP
transport and this ASGI middleware gives each conversation its identity:

- an ``initialize`` without an id gets a new, unguessable one (``tmc_`` + 256 random bits) in
  the ``Mcp-Session-Id`` response header, and the conversation's
  :class:`~toolmgmt_core.ToolSession` state is created in the store;
- every later request is checked against the store, on whichever replica it lands: an unknown,
  expired or deleted id, or one presented with another ``Authorization`` header, gets the SDK's
  own answer (404, ``Session not found``); a known one is handed to the gateway's handlers
  (``scope["toolmgmt.conversation"]``), which restore the session from it and save each change;
- ``DELETE`` ends the conversation; ``GET`` (the standalone stream, which the stateless
  transport does not have) is 405;
- a request of the sessionless 2026 protocol is answered ``-32022`` naming the handshake
  versions, so a default ``mcp.Client`` falls back to ``initialize`` by itself;
- a store that cannot be reached gives HTTP 503 with a JSON-RPC error naming it, never a hang.

The store never holds an id: a conversation is kept under the SHA-256 of its id and the
caller's ``Authorization`` header, so a dump of the store hands out no live conversation, and
an id is worthless with another token.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from toolmgmt_core.model.errors import SessionConflictError, StoreError, StoreUnavailableError
from toolmgmt_core.stores import SessionStore, StoredSession
from toolmgmt_mcp.exchange import answer_directly, direct_request

__all__ = ["CONVERSATION_SCOPE_KEY", "Conversation", "ConversationMiddleware", "conversation_key"]

logger = logging.getLogger("toolmgmt_mcp")

CONVERSATION_SCOPE_KEY = "toolmgmt.conversation"
"""Where the middleware puts the request's checked :class:`Conversation` in the ASGI scope."""

_ID_PREFIX = "tmc_"
_KEY_PREFIX = "mcp-"
_MAX_DIRECT_BODY = 1 << 20
"""Largest body read to decide whether a request can be answered directly (a larger one goes
to the SDK, which applies its own limit)."""
_MAX_OPENING_BODY = 1 << 20
"""Largest body read from a request without an id (an ``initialize`` is a few hundred bytes)."""
_JSON = [(b"content-type", b"application/json")]
_NOT_FOUND = json.dumps(  # the SDK's own answer to an unknown session: clients know it
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": "Session not found"},
    }
).encode()


@dataclass(frozen=True)
class Conversation:
    """One request's conversation, checked against the session store."""

    key: str
    """Its session id in the store (a hash: the id itself is never stored)."""
    stored: StoredSession
    """Its state as loaded for this request."""


def conversation_key(conversation_id: str, authorization: str) -> str:
    """The session-store id of a conversation: SHA-256 of its id and its caller's
    ``Authorization`` header (so the same id with another token is another, unknown, key)."""
    digest = hashlib.sha256(f"{conversation_id}\n{authorization}".encode()).hexdigest()
    return _KEY_PREFIX + digest


class ConversationMiddleware:
    """ASGI middleware keeping the gateway's conversations in a shared session store.

    Usage::

        app = ConversationMiddleware(
            server.streamable_http_app(stateless_http=True), store, path="/mcp",
            initial_state=manager.session().to_json(),
        )

    Args:
        app: the SDK's streamable HTTP app, stateless.
        store: where conversations live (a Redis store shared by the replicas).
        path: the MCP endpoint's path; other paths (``/healthz``) pass through untouched.
        initial_state: the session state a new conversation starts with.
        server: the SDK server behind ``app``: a known conversation's plain requests are then
            answered in their own task (:mod:`toolmgmt_mcp.exchange`), the rest by ``app``.
    """

    def __init__(
        self,
        app: Any,
        store: SessionStore,
        *,
        path: str = "/mcp",
        initial_state: Mapping[str, Any] | None = None,
        server: Any = None,
    ) -> None:
        self.app = app
        self.server = server
        self.store = store
        self.path = path
        self.initial_state = dict(initial_state or {})
        self._down = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method = scope["method"]
        if method == "GET":  # no standalone stream in stateless mode (the spec allows 405)
            await _respond(send, 405, b"", [(b"allow", b"POST, DELETE")])
            return
        version = headers.get("mcp-protocol-version")
        if method == "POST" and version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._handshake_only(receive, send, version)
            return
        authorization = headers.get("authorization", "")
        conversation_id = headers.get("mcp-session-id")
        if conversation_id is not None:
            await self._continue(scope, receive, send, headers, conversation_id, authorization)
        elif method == "POST":
            await self._open(scope, receive, send, authorization)
        else:
            await _error(send, 400, INVALID_REQUEST, "Bad Request: Missing session ID")

    # -- an existing conversation -----------------------------------------------------------

    async def _continue(
        self,
        scope: Any,
        receive: Any,
        send: Any,
        headers: dict[str, str],
        conversation_id: str,
        authorization: str,
    ) -> None:
        key = conversation_key(conversation_id, authorization)
        try:
            if scope["method"] == "DELETE":
                if await self._run(self.store.load, key) is None:
                    await _respond(send, 404, _NOT_FOUND, _JSON)
                else:
                    await self._run(self.store.delete, key)
                    await _respond(send, 204, b"", [])
                return
            stored = await self._run(self.store.load, key, touch=True)
        except StoreError as exc:
            await self._store_failed(send, exc)
            return
        if stored is None:
            await _respond(send, 404, _NOT_FOUND, _JSON)
            return
        scope[CONVERSATION_SCOPE_KEY] = Conversation(key, stored)
        if self.server is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, complete = await _read_up_to(receive, _MAX_DIRECT_BODY)
        message = direct_request(headers, body) if complete else None
        if message is not None and await answer_directly(
            self.server, scope, receive, send, message
        ):
            return
        await self.app(scope, _replaying(body, complete, receive), send)

    # -- a new conversation -----------------------------------------------------------------

    async def _open(self, scope: Any, receive: Any, send: Any, authorization: str) -> None:
        body = await _read_body(receive, _MAX_OPENING_BODY)
        if body is None:
            await _error(send, 413, INVALID_REQUEST, "Request body too large.")
            return
        message = _parse(body)
        if message.get("method") != "initialize":
            await _error(
                send,
                400,
                INVALID_REQUEST,
                "Bad Request: Missing session ID (send initialize first; its response carries "
                "the Mcp-Session-Id header to send with every later request).",
                message.get("id"),
            )
            return
        conversation_id = _ID_PREFIX + secrets.token_urlsafe(32)  # 256 bits: unguessable
        key = conversation_key(conversation_id, authorization)
        try:
            await self._run(self.store.save, key, self.initial_state, version=0)
        except SessionConflictError:  # pragma: no cover - a 256-bit collision
            await _error(send, 500, INTERNAL_ERROR, "Could not open a conversation; retry.")
            return
        except StoreError as exc:
            await self._store_failed(send, exc, message.get("id"))
            return

        async def send_with_id(event: Any) -> None:
            if event["type"] == "http.response.start":
                if event["status"] < 400:
                    header = (b"mcp-session-id", conversation_id.encode("ascii"))
                    event = {**event, "headers": [*event.get("headers", []), header]}
                else:  # the initialize failed: no conversation
                    await self._forget(key)
            await send(event)

        scope[CONVERSATION_SCOPE_KEY] = Conversation(key, StoredSession(self.initial_state, 0))
        await self.app(scope, _replaying(body, True, receive), send_with_id)

    async def _forget(self, key: str) -> None:
        try:
            await self._run(self.store.delete, key)
        except StoreError as exc:  # it expires with its TTL
            logger.warning("could not delete a conversation whose initialize failed: %s", exc)

    # -- the 2026 protocol --------------------------------------------------------------------

    async def _handshake_only(self, receive: Any, send: Any, version: str) -> None:
        body = await _read_body(receive, _MAX_OPENING_BODY)
        supported = list(HANDSHAKE_PROTOCOL_VERSIONS)
        await _error(
            send,
            400,
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {version}: this gateway keeps conversations in a "
            f"shared store, which needs the initialize handshake ({', '.join(supported)}).",
            _parse(body or b"").get("id"),
            data={"supported": supported, "requested": version},
        )

    # -- the store ----------------------------------------------------------------------------

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """A store call on a worker thread (the stores are synchronous); notes recoveries."""
        result = await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))
        if self._down:
            self._down = False
            logger.warning("session store %s answers again: conversations open", self._where)
        return result

    @property
    def _where(self) -> str:
        return str(getattr(self.store, "url", type(self.store).__name__))

    async def _store_failed(self, send: Any, exc: StoreError, request_id: Any = None) -> None:
        unavailable = isinstance(exc, StoreUnavailableError)
        if not self._down or not unavailable:
            logger.error(
                "session store %s: %s; answering 503 until it answers again", self._where, exc
            )
        self._down = unavailable
        status = 503 if unavailable else 500
        what = "is unreachable" if unavailable else "failed"
        await _error(
            send,
            status,
            INTERNAL_ERROR,
            f"Service unavailable ({status}): the gateway's session store ({self._where}) {what}, "
            f"so conversations can be neither opened nor continued; retry shortly. ({exc})",
            request_id,
            extra_headers=[(b"retry-after", b"1")] if unavailable else [],
        )


def _replaying(body: bytes, complete: bool, receive: Any) -> Any:
    """An ASGI ``receive`` that gives ``body`` (read already) first, then what is left."""
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": not complete}
        return await receive()

    return replay


def _parse(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return {}
    return message if isinstance(message, dict) else {}


async def _read_up_to(receive: Any, limit: int) -> tuple[bytes, bool]:
    """The request body read until it ends or passes ``limit`` bytes; whether it ended."""
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] != "http.request":
            return b"".join(chunks), True
        chunk = event.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not event.get("more_body", False):
            return b"".join(chunks), True
        if size > limit:
            return b"".join(chunks), False


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes."""
    body, complete = await _read_up_to(receive, limit)
    return body if complete and len(body) <= limit else None


async def _error(
    send: Any,
    status: int,
    code: int,
    message: str,
    request_id: Any = None,
    *,
    data: Any = None,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    await _respond(send, status, body, [*_JSON, *(extra_headers or [])])


async def _respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
