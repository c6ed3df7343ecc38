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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request

__all__ = ["answer_directly", "direct_request"]

logger = logging.getLogger("toolmgmt_mcp")

_SSE_HEADERS = [  # the SDK's stateless transport's
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)


@dataclass
class _Exchange:
    """The ``DispatchContext`` of one request answered as JSON: no back-channel (as in the
    SDK's stateless transport), and no stream for notifications (a request with a progress
    token never comes here)."""

    request_id: str | int
    message_metadata: ServerMessageMetadata
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


def direct_request(headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC request in ``body`` when it can be answered directly, else None.

    ``headers`` are the request's, lower-cased. Only what the SDK would accept as it is
    qualifies: the checks it makes on a POST of a known session, done the same way.
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
    if isinstance(meta, dict) and "progressToken" in meta:
        return None  # its notifications need the SDK's SSE stream
    return message


_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


async def answer_directly(
    server: Any, scope: Any, receive: Any, send: Any, message: dict[str, Any]
) -> bool:
    """Answer ``message`` (from :func:`direct_request`) as a one-event SSE stream; False,
    having sent nothing, when the SDK should (its HTTP app has not started, or the request fails
    a check only it knows how to refuse).
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
    exchange = _Exchange(request_id, ServerMessageMetadata(request_context=request))
    connection = Connection.from_envelope(request.headers["mcp-protocol-version"], None, None)
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
            logger.exception("handler for %r raised", message["method"])
            reply["error"] = {"code": 0, "message": str(exc)}
        else:
            reply["error"] = error.model_dump(mode="json", by_alias=True, exclude_none=True)
    data = json.dumps(reply, separators=(",", ":"), ensure_ascii=False)
    event = f"event: message\r\ndata: {data}\r\n\r\n".encode()
    await send({"type": "http.response.body", "body": event})
    return True
