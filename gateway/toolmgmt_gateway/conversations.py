"""Conversations that outlive the replica serving them, for both protocols.

The 2025 protocol has a session, and with a session store (``[store] sessions``) the gateway
issues its ids itself: every replica serves the SDK's *stateless* HTTP transport and this ASGI
middleware gives each conversation its identity:

- an ``initialize`` without an id gets a new, unguessable one (``tmc_`` + 256 random bits) in
  the ``Mcp-Session-Id`` response header, and the conversation's
  :class:`~toolmgmt_core.ToolSession` state is created in the store;
- every later request is checked against the store, on whichever replica it lands: an unknown,
  expired or deleted id, or one presented with another ``Authorization`` header, gets the SDK's
  own answer (404, ``Session not found``); a known one is handed to the gateway's handlers
  (``scope["toolmgmt.conversation"]``), which restore the session from it and save each change;
- ``DELETE`` ends the conversation; ``GET`` (the standalone stream, which the stateless
  transport does not have) is 405;
- a client that declared a capability an upstream's question can need (its id carries them)
  gets its calls answered on a stream of the gateway's own (:mod:`toolmgmt_gateway.exchange`),
  which can carry a question to it; its answer, POSTed to any replica, is handed to the replica
  that asked (:mod:`toolmgmt_gateway.replies`);
- a store that cannot be reached gives HTTP 503 with a JSON-RPC error naming it, never a hang.

The 2026 protocol has no session: each request stands alone and any replica answers it (the
SDK's per-request path). What a 2026 call needs across calls is the caller's result budget
(``[gateway] session_result_budget``; nothing else in gateway mode), which is kept per caller:
with ``per_principal``, a ``tools/call`` gets the conversation of its ``Authorization`` header
(:func:`principal_key`) from the store, restarting its TTL, as a 2025 conversation does. The
middleware serves that alone (``handshake=False``) in front of the SDK's own sessions, for a
gateway without a shared store.

The store never holds an id or a token: a conversation is kept under the SHA-256 of its id and
the caller's ``Authorization`` header (or of the header alone, for a caller's 2026
conversation), so a dump of the store hands out no live conversation, and an id is worthless
with another token. On a gateway with ``[gateway.clients]``, the client's name stands for the
header (:func:`~toolmgmt_gateway.clients.request_principal`): a conversation belongs to the client
that opened it, whichever of its tokens it uses, and to no other client.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from toolmgmt_core import SessionConflictError, StoreError, StoreUnavailableError
from toolmgmt_core.integration import SessionStore, StoredSession, call_store
from toolmgmt_gateway.clients import request_principal, scope_client
from toolmgmt_gateway.exchange import QUESTION_PREFIX, Questions, answer_directly, direct_request
from toolmgmt_gateway.replies import ANSWER_WAIT
from toolmgmt_gateway.responses import JSON, jsonrpc_error, respond

__all__ = [
    "CONVERSATION_SCOPE_KEY",
    "Conversation",
    "ConversationMiddleware",
    "conversation_key",
    "principal_key",
]

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
    stored: StoredSession | None
    """Its state as loaded for this request (None: not in the store yet)."""


def conversation_key(conversation_id: str, authorization: str) -> str:
    """The session-store id of a conversation: SHA-256 of its id and its caller's
    ``Authorization`` header (so the same id with another token is another, unknown, key)."""
    digest = hashlib.sha256(f"{conversation_id}\n{authorization}".encode()).hexdigest()
    return _KEY_PREFIX + digest


def principal_key(authorization: str) -> str:
    """The session-store id of a caller's 2026 conversation: SHA-256 of its ``Authorization``
    header (one conversation per credential: per client, once each client has its own)."""
    digest = hashlib.sha256(f"principal\n{authorization}".encode()).hexdigest()
    return _KEY_PREFIX + "p-" + digest


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
        server: the SDK server behind ``app``, for the requests answered in their own task
            (:mod:`toolmgmt_gateway.exchange`).
        direct: answer a known conversation's plain requests that way (the rest by ``app``).
        replies: where a 2025 client's answers to questions go (a
            :class:`~toolmgmt_gateway.replies.RedisReplies`): the calls of a client that declared
            a capability a question needs are then answered that way, with a back-channel.
            None: no question can reach a 2025 client.
        handshake: keep the 2025 protocol's conversations in ``store`` (``app`` stateless);
            False leaves them to ``app`` (the SDK's sessions, in this process).
        per_principal: give each 2026 ``tools/call`` its caller's conversation from ``store``
            (a result budget to keep across calls).
        on_store_error: told the operation (``load``...) each time the store fails (the
            gateway's ``/metrics`` counts them).
    """

    def __init__(
        self,
        app: Any,
        store: SessionStore,
        *,
        path: str = "/mcp",
        initial_state: Mapping[str, Any] | None = None,
        server: Any = None,
        direct: bool = False,
        replies: Any = None,
        handshake: bool = True,
        per_principal: bool = False,
        on_store_error: Callable[[str], None] | None = None,
    ) -> None:
        self.app = app
        self.on_store_error = on_store_error
        self.direct = direct
        self.replies = replies
        self.handshake = handshake
        self.per_principal = per_principal
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
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._stateless(scope, receive, send, headers)  # 2026 (or a version to refuse)
            return
        if not self.handshake:
            await self.app(scope, receive, send)
            return
        if method == "GET":  # no standalone stream in stateless mode (the spec allows 405)
            await respond(send, 405, b"", [(b"allow", b"POST, DELETE")])
            return
        authorization = request_principal(scope, headers.get("authorization", ""))
        conversation_id = headers.get("mcp-session-id")
        if conversation_id is not None:
            await self._continue(scope, receive, send, headers, conversation_id, authorization)
        elif method == "POST":
            await self._open(scope, receive, send, authorization)
        else:
            await jsonrpc_error(send, 400, INVALID_REQUEST, "Bad Request: Missing session ID")

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
                    await respond(send, 404, _NOT_FOUND, JSON)
                else:
                    await self._run(self.store.delete, key)
                    await respond(send, 204, b"", [])
                return
            stored = await self._run(self.store.load, key, touch=True)
        except StoreError as exc:
            await self._store_failed(send, exc)
            return
        if stored is None:
            await respond(send, 404, _NOT_FOUND, JSON)
            return
        scope[CONVERSATION_SCOPE_KEY] = Conversation(key, stored)
        declared = _declared(conversation_id)
        asks = self.replies is not None and bool(declared)  # questions can reach this client
        if self.server is None or scope["method"] != "POST" or not (self.direct or asks):
            await self.app(scope, receive, send)
            return
        body, complete = await _read_up_to(receive, _MAX_DIRECT_BODY)
        question = _answered(body) if asks and complete else None
        if question is not None:  # the client answers a question a call asked it
            await self._deliver(send, key, question, body)
            return
        message = direct_request(headers, body, progress=asks) if complete else None
        if message is not None and (self.direct or message["method"] == "tools/call"):
            questions = Questions(self.replies, key, ANSWER_WAIT) if asks else None
            if await answer_directly(
                self.server,
                scope,
                receive,
                send,
                message,
                capabilities=declared,
                questions=questions,
            ):
                return
        await self.app(scope, _replaying(body, complete, receive), send)

    async def _deliver(self, send: Any, key: str, question: str, answer: bytes) -> None:
        """Hand a client's answer to the replica whose call asked (maybe this one): 202."""
        try:
            await self._run(self.replies.post, key, question, answer)
        except StoreError as exc:
            await self._store_failed(send, exc)
            return
        await respond(send, 202, b"", [])

    # -- a new conversation -----------------------------------------------------------------

    async def _open(self, scope: Any, receive: Any, send: Any, authorization: str) -> None:
        body = await _read_body(receive, _MAX_OPENING_BODY)
        if body is None:
            await jsonrpc_error(send, 413, INVALID_REQUEST, "Request body too large.")
            return
        message = _parse(body)
        if message.get("method") != "initialize":
            await jsonrpc_error(
                send,
                400,
                INVALID_REQUEST,
                "Bad Request: Missing session ID (send initialize first; its response carries "
                "the Mcp-Session-Id header to send with every later request).",
                message.get("id"),
            )
            return
        conversation_id = _ID_PREFIX + secrets.token_urlsafe(32)  # 256 bits: unguessable
        if self.replies is not None:
            conversation_id += _with_capabilities(message)
        key = conversation_key(conversation_id, authorization)
        try:
            await self._run(self.store.save, key, self.initial_state, version=0)
        except SessionConflictError:  # pragma: no cover - a 256-bit collision
            await jsonrpc_error(send, 500, INTERNAL_ERROR, "Could not open a conversation; retry.")
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
                    await self._forget(key, scope_client(scope))
            await send(event)

        scope[CONVERSATION_SCOPE_KEY] = Conversation(key, StoredSession(self.initial_state, 0))
        await self.app(scope, _replaying(body, True, receive), send_with_id)

    async def _forget(self, key: str, client: str | None) -> None:
        try:
            await self._run(self.store.delete, key)
        except StoreError as exc:  # it expires with its TTL
            logger.warning(
                "could not delete a conversation whose initialize failed: %s",
                exc,
                extra={"client": client},
            )

    # -- the 2026 protocol --------------------------------------------------------------------

    async def _stateless(
        self, scope: Any, receive: Any, send: Any, headers: dict[str, str]
    ) -> None:
        """A request of the sessionless protocol: to the SDK's per-request path, with its
        caller's conversation when it is a call that keeps one. (``Mcp-Method`` says which
        method the body holds; the SDK refuses a request where they differ.)"""
        if (
            self.per_principal
            and scope["method"] == "POST"
            and headers.get("mcp-method") == "tools/call"
        ):
            key = principal_key(request_principal(scope, headers.get("authorization", "")))
            try:
                stored = await self._run(self.store.load, key, touch=True)
            except StoreError as exc:
                await self._store_failed(send, exc)
                return
            scope[CONVERSATION_SCOPE_KEY] = Conversation(key, stored)
        await self.app(scope, receive, send)

    # -- the store ----------------------------------------------------------------------------

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """A store call on a worker thread (the stores are synchronous); notes recoveries."""
        result = await call_store(self.store, lambda: function(*args, **kwargs))
        if self._down:
            self._down = False
            logger.warning("session store %s answers again: conversations open", self._where)
        return result

    @property
    def _where(self) -> str:
        return str(getattr(self.store, "url", type(self.store).__name__))

    async def _store_failed(self, send: Any, exc: StoreError, request_id: Any = None) -> None:
        if self.on_store_error is not None:
            self.on_store_error("conversation")
        unavailable = isinstance(exc, StoreUnavailableError)
        if not self._down or not unavailable:
            logger.error(
                "session store %s: %s; answering 503 until it answers again", self._where, exc
            )
        self._down = unavailable
        status = 503 if unavailable else 500
        what = "is unreachable" if unavailable else "failed"
        await jsonrpc_error(
            send,
            status,
            INTERNAL_ERROR,
            f"Service unavailable ({status}): the gateway's session store ({self._where}) {what}, "
            f"so conversations can be neither opened nor continued; retry shortly. ({exc})",
            request_id,
            # Retry-After: the gateway's admission layer gives every 503 the same one.
        )


_RELAYED = {"elicitation": ("form", "url"), "sampling": ("tools", "context"), "roots": ()}
"""The client capabilities a question can need, with the parts of each worth keeping."""


def _with_capabilities(initialize: Mapping[str, Any]) -> str:
    """What a new conversation's id carries of its client's declared capabilities (those a
    question can need, as ``.`` and compact JSON in base64url), or "" when none. The replicas
    store nothing more per conversation, and a client cannot alter them: the id with its
    credentials is the conversation's key."""
    params = initialize.get("params")
    declared = params.get("capabilities") if isinstance(params, Mapping) else None
    if not isinstance(declared, Mapping):
        return ""
    kept: dict[str, Any] = {}
    for name, parts in _RELAYED.items():
        value = declared.get(name)
        if isinstance(value, Mapping):
            kept[name] = {part: {} for part in parts if value.get(part) is not None}
    if not kept:
        return ""
    data = json.dumps(kept, separators=(",", ":"), sort_keys=True).encode()
    return "." + base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _declared(conversation_id: str) -> dict[str, Any] | None:
    """The capabilities a conversation's id carries (:func:`_with_capabilities`), or None."""
    _, dot, encoded = conversation_id.partition(".")
    if not dot or len(encoded) > 400:
        return None
    try:
        declared = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(declared, dict):
        return None
    return {k: v for k, v in declared.items() if k in _RELAYED and isinstance(v, dict)} or None


def _answered(body: bytes) -> str | None:
    """The question a POSTed JSON-RPC response answers, when it answers one of the gateway's
    (its id), else None."""
    message = _parse(body)
    question = message.get("id")
    if (
        "method" not in message
        and ("result" in message or "error" in message)
        and isinstance(question, str)
        and question.startswith(QUESTION_PREFIX)
        and len(question) <= 64
    ):
        return question
    return None


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
