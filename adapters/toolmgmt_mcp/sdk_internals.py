"""What the adapter and the gateway need of the MCP SDK that it does not publish, in one place.

Written against ``mcp`` 2.3.0 (``pip show mcp``). Every other module of the project uses the
SDK's public API only (``tests/core/test_private_access.py`` scans them, and allows this module
alone); each name here reaches one private part of the SDK, and
``tests/adapters/mcp/test_sdk_internals.py`` fails when the SDK changes its shape, so an upgrade
breaks a test rather than a call. What each stands in for:

- :func:`list_page_raw` (over :func:`send_unvalidated` and :func:`absorb_tools`): a
  ``tools/list`` page read as plain JSON (the SDK validates a whole page before anyone sees it,
  so one malformed tool would hide all), its valid tools made known to the session as
  ``list_tools`` would;
- :func:`keep_meta_key`: one ``_meta`` key given with a request kept, where the SDK stamps every
  request with the connection's own (a 2026 call carries its client's capabilities);
- :func:`connection_state`: the scratch state of a low-level handler's connection
  (``Connection.state``, public, reached only through the request's session);
- :func:`open_sessions` and :func:`lifespan_state`: the streamable HTTP session manager's open
  sessions and the state its lifespan started with;
- ``OpenTelemetryMiddleware``, ``otel_span``, ``extract_trace_context``: the SDK's request span,
  which the gateway extends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp.types as mcp_types
import pydantic
from mcp import Client
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.shared._otel import extract_trace_context, otel_span

__all__ = [
    "OpenTelemetryMiddleware",
    "absorb_tools",
    "connection_state",
    "extract_trace_context",
    "keep_meta_key",
    "lifespan_state",
    "list_page_raw",
    "open_sessions",
    "otel_span",
    "send_unvalidated",
]


async def send_unvalidated(client: Client, request: mcp_types.Request[Any, Any]) -> dict[str, Any]:
    """``request``'s result as the upstream sent it, stamped as the session stamps any."""
    session: Any = client.session
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    session._stamp(data, options)
    raw: dict[str, Any] = await session._dispatcher.send_raw_request(
        data["method"], data.get("params"), options
    )
    return raw


def absorb_tools(client: Client, tools: list[mcp_types.Tool]) -> None:
    """Make ``tools`` (one page of a listing) known to the session, as ``list_tools`` does (it
    checks structured results against their output schemas)."""
    session: Any = client.session
    session._absorb_tool_listing(mcp_types.ListToolsResult(tools=tools), complete=False)


def keep_meta_key(client: Client, key: str) -> bool:
    """From now on, a ``_meta[key]`` given with a request of ``client`` is sent as given, not
    replaced by the connection's own; False (nothing changed) where the SDK stamps none."""
    session: Any = client.session
    stamp = getattr(session, "_stamp", None)
    if stamp is None:
        return False

    def stamp_keeping(data: dict[str, Any], options: Any) -> None:
        given = (data.get("params") or {}).get("_meta")
        value = given.get(key) if isinstance(given, Mapping) else None
        stamp(data, options)
        meta = (data.get("params") or {}).get("_meta")
        if value is not None and isinstance(meta, dict):
            meta[key] = value

    session._stamp = stamp_keeping
    return True


def connection_state(ctx: Any) -> dict[str, Any] | None:
    """The state kept for the connection of ``ctx`` (a low-level handler's
    ``ServerRequestContext``) across its requests, or None."""
    state = getattr(getattr(ctx.session, "_connection", None), "state", None)
    return state if isinstance(state, dict) else None


def open_sessions(server: Any) -> int:
    """How many MCP sessions ``server`` (a low-level ``Server``) holds open over streamable
    HTTP (none before its HTTP app is made, nor when stateless)."""
    manager = getattr(server, "_session_manager", None)
    return len(getattr(manager, "_server_instances", None) or ())


def lifespan_state(server: Any) -> tuple[Any, Any] | None:
    """``server``'s streamable HTTP session manager and the state its lifespan started with, or
    None while its HTTP app is not running."""
    manager = getattr(server, "_session_manager", None)
    state = getattr(manager, "_lifespan_state", None)
    return None if manager is None or state is None else (manager, state)


async def list_page_raw(
    client: Client, cursor: str | None
) -> tuple[list[mcp_types.Tool], list[tuple[str, str]], str | None]:
    """One ``tools/list`` page read as plain JSON, after the SDK refused it whole: (valid tools,
    (name, reason) skipped, cursor)."""
    request = mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
    raw = await send_unvalidated(client, request)
    good: list[mcp_types.Tool] = []
    bad: list[tuple[str, str]] = []
    for position, item in enumerate(raw.get("tools") or []):
        label = str(item.get("name", f"#{position}")) if isinstance(item, dict) else f"#{position}"
        try:
            good.append(mcp_types.Tool.model_validate(item))
        except pydantic.ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            problem = exc.errors()[0]["msg"]
            bad.append((label, f"malformed tool definition: {where}: {problem}"))
    absorb_tools(client, good)
    cursor = raw.get("nextCursor")
    return good, bad, cursor if isinstance(cursor, str) and cursor else None
