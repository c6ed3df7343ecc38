"""Answers the gateway's ASGI middleware writes itself, before a request reaches the MCP SDK
(the HTTP front end, admission, conversations): a body with its length, and a JSON-RPC error."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSON", "jsonrpc_error", "respond"]

JSON = [(b"content-type", b"application/json")]
"""The headers of a JSON body."""


async def respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Send one whole response: ``headers`` and the body's length, then ``body``."""
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def jsonrpc_error(
    send: Any,
    status: int,
    code: int,
    message: str,
    request_id: Any = None,
    *,
    data: Any = None,
) -> None:
    """Send a JSON-RPC error with HTTP ``status``, answering ``request_id`` when it is one a
    JSON-RPC id may be (a string or a number), else ``null``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    await respond(send, status, body, JSON)
