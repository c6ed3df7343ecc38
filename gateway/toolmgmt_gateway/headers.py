"""The MCP routing headers as the protocol reads them: optional whitespace trimmed.

A field value's leading and trailing whitespace is not part of it (RFC 9110, section 5.5), and
SEP-2243 says a server must accept ``Mcp-Name:  notes_search  ``. The MCP SDK compares the 2026
routing headers (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``, ``MCP-Protocol-Version``) with
the request body as they arrive, and refuses such a request as a mismatch (HTTP 400,
``-32020``), so :class:`TrimmedHeaders` trims their values before it sees them. Other headers
are passed on untouched.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TrimmedHeaders"]

_OWS = b" \t"
_MCP = b"mcp-"


class TrimmedHeaders:
    """ASGI middleware trimming optional whitespace around the values of ``Mcp-*`` headers.

    Usage::

        app = TrimmedHeaders(server.streamable_http_app())
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = scope.get("headers") or []
            if any(k.startswith(_MCP) and v != v.strip(_OWS) for k, v in headers):
                trimmed = [(k, v.strip(_OWS) if k.startswith(_MCP) else v) for k, v in headers]
                scope = {**scope, "headers": trimmed}
        await self.app(scope, receive, send)
