"""A stored conversation's plain requests answered in the request's own task.

The SDK's stateless transport serves each HTTP request with a transport, memory streams, a
JSON-RPC dispatcher and a server task of its own: most of a replica's CPU per call
(``bench/scaleout.py --profile``). A request that needs none of that (a handshake-era JSON-RPC
request with an id, no progress token, a valid ``Accept``, ``Content-Type``, protocol version
and, when DNS-rebinding protection is on, ``Host`` and ``Origin``) is answered here instead,
through the same kernel the stateless transport drives (:func:`mcp.server.runner.serve_one`
over ``Connection.from_envelope``, as the SDK's stateless path builds it), so handlers,
middleware and result shapes are the SDK's. Anything else (``initialize``, notifications,
batches, a progress token whose notifications need a stream, a header the SDK would refuse)
goes to the SDK unchanged, which answers or refuses it as it always does.

The answer is an SSE stream of one event, as the SDK's: its headers leave before the handler
runs, so a client whose replica dies mid-call sees that stream end without an answer (one call
fails, and ``mcp.Client`` goes on) rather than a connection closed before any response, which
the SDK's client does not survive. A request the replica had not read yet when it died still
gets no response at all from HAProxy, and more often on this path than on the SDK's, which is
why it is opt-in (``[gateway] direct_answers``; docs/deploy.md).

The same path gives a 2025 client's calls the back-channel the stateless transport has not
(:class:`Questions`): a question an upstream asks its user goes to the client as a request on
the call's stream, and the client's answer, POSTed to any replica, comes back through
:mod:`toolmgmt_gateway.replies`; the call's progress goes on the stream as well.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import (
    handler_exception_to_error_data,
    progress_token_from_params,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request

from toolmgmt_core.integration import Pool
from toolmgmt_gateway.clients import scope_client

__all__ = ["QUESTION_PREFIX", "Questions", "answer_directly", "direct_request"]

logger = logging.getLogger("toolmgmt_mcp")

_SSE_HEADERS = [  # the SDK's stateless transport's
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
_WAITS = Pool("client-answers", 64)
"""Threads waiting for a 2025 client's answer through the replies store (each at most the
question's timeout); questions past them queue."""
_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
QUESTION_PREFIX = "tmq_"
"""What the ids of the gateway's requests to a 2025 client start with (its answers' ids)."""


@dataclass(frozen=True)
class Questions:
    """Where a call's questions to its 2025 client are answered: the conversation's answers,
    delivered by whichever replica the client POSTs them to."""

    replies: Any
    """The answers' way back (a :class:`~toolmgmt_gateway.replies.RedisReplies`)."""
    conversation: str
    """The conversation's store key."""
    timeout: float
    """Seconds to wait for one answer."""

    async def answer(self, question: str) -> dict[str, Any]:
        """The client's JSON-RPC response to ``question``.

        Raises:
            MCPError: no answer in time, or the answer could not be read.
        """
        raw = await _WAITS.run(self.replies.take, self.conversation, question, self.timeout)
        if raw is None:
            raise MCPError(-32001, f"The client did not answer within {self.timeout:g}s.")
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise MCPError(-32700, f"The client's answer is not JSON: {exc}") from exc
        if not isinstance(answer, dict):
            raise MCPError(-32600, "The client's answer is not a JSON-RPC response.")
        return answer


@dataclass
class _Exchange:
    """The ``DispatchContext`` of one request answered on its own SSE stream: notifications
    and progress go on it; so do requests to the client when the call has :class:`Questions`
    (else there is no back-channel, as in the SDK's stateless transport)."""

    request_id: str | int
    message_metadata: ServerMessageMetadata
    write: Callable[[dict[str, Any]], Awaitable[None]]
    """Sends one JSON-RPC message as an SSE event (the stream has started)."""
    questions: Questions | None = None
    progress_token: Any = None
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return self.questions is not None

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if self.questions is None:
            raise NoBackChannelError(method)
        question = QUESTION_PREFIX + secrets.token_urlsafe(16)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": question, "method": method}
        if params is not None:
            message["params"] = dict(params)
        await self.write(message)
        answer = await self.questions.answer(question)
        error = answer.get("error")
        if isinstance(error, dict):
            raise MCPError(
                int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
            )
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            await self.write(message)
        except OSError:  # the client went away: nothing to tell it
            logger.debug("dropped %s: the response stream is closed", method)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)


def direct_request(
    headers: Mapping[str, str], body: bytes, *, progress: bool = False
) -> dict[str, Any] | None:
    """The JSON-RPC request in ``body`` when it can be answered directly, else None.

    ``headers`` are the request's, lower-cased. Only what the SDK would accept as it is
    qualifies: the checks it makes on a POST of a known session, done the same way. A request
    with a progress token qualifies only with ``progress`` (its notifications then go on the
    direct answer's stream).
    """
    if not headers.get("content-type", "").lower().startswith("application/json"):
        return None
    if headers.get("mcp-protocol-version") not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id, method, params = message.get("id"), message.get("method"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    if not isinstance(method, str) or method == "initialize" or set(message) - _REQUEST_KEYS:
        return None
    if params is not None and not isinstance(params, dict):
        return None
    meta = (params or {}).get("_meta")
    if isinstance(meta, dict) and "progressToken" in meta and not progress:
        return None  # its notifications need the SDK's SSE stream
    return message


_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


async def answer_directly(
    server: Any,
    scope: Any,
    receive: Any,
    send: Any,
    message: dict[str, Any],
    *,
    capabilities: Mapping[str, Any] | None = None,
    questions: Questions | None = None,
) -> bool:
    """Answer ``message`` (from :func:`direct_request`) on an SSE stream of its own; False,
    having sent nothing, when the SDK should (its HTTP app has not started, or the request fails
    a check only it knows how to refuse).

    Args:
        capabilities: the client's declared capabilities (its ``initialize``), or None.
        questions: where the call's questions to the client are answered, or None (none can
            be asked).
    """
    manager = getattr(server, "_session_manager", None)
    lifespan_state = getattr(manager, "_lifespan_state", None)
    if manager is None or lifespan_state is None:
        return False
    request = Request(scope, receive)
    has_json, has_sse = check_accept_headers(request)
    if not (has_json and has_sse):
        return False
    security = TransportSecurityMiddleware(manager.security_settings)
    if await security.validate_request(request, is_post=True) is not None:
        return False
    request_id = message["id"]

    async def write(event: dict[str, Any], more: bool = True) -> None:
        data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
        body = f"event: message\r\ndata: {data}\r\n\r\n".encode()
        await send({"type": "http.response.body", "body": body, "more_body": more})

    exchange = _Exchange(
        request_id,
        ServerMessageMetadata(request_context=request),
        write,
        questions=questions,
        progress_token=progress_token_from_params(message.get("params")),
    )
    version = request.headers["mcp-protocol-version"]
    connection = Connection.from_envelope(version, None, dict(capabilities or {}) or None)
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    try:
        reply["result"] = await serve_one(
            server,
            exchange,  # type: ignore[arg-type]  # a DispatchContext by structure
            message["method"],
            message.get("params"),
            connection=connection,
            lifespan_state=lifespan_state,
        )
    except Exception as exc:  # the SDK's own mapping of a handler's failure to the wire
        error = handler_exception_to_error_data(exc)
        if error is None:
            client = scope_client(scope)
            logger.exception("handler for %r raised", message["method"], extra={"client": client})
            reply["error"] = {"code": 0, "message": str(exc)}
        else:
            reply["error"] = error.model_dump(mode="json", by_alias=True, exclude_none=True)
    await write(reply, more=False)
    return True
