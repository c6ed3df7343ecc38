"""The MCP SDK's private parts ``toolmgmt_mcp.sdk_internals`` reaches still have the shape it
was written against (mcp 2.3.0): an SDK upgrade that moves one fails here, by name, rather
than in a call (issue 42, item 4)."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import mcp.types as mcp_types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.server.connection import Connection  # noqa: E402
from mcp.server.context import ServerMiddleware  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.session import ServerSession  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: E402
from mcp_types import CLIENT_CAPABILITIES_META_KEY  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from toolmgmt_mcp import sdk_internals  # noqa: E402

VERSION = sorted(MODERN_PROTOCOL_VERSIONS)[-1]


def _parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _client_session() -> ClientSession:
    send, receive = anyio.create_memory_object_stream[Any](1)
    return ClientSession(receive, send)


def test_a_client_session_stamps_and_sends_through_private_parts() -> None:
    session = _client_session()
    assert callable(session._stamp) and len(_parameters(session._stamp)) == 2  # (data, opts)
    send_raw = session._dispatcher.send_raw_request
    assert inspect.iscoroutinefunction(send_raw)
    assert _parameters(send_raw)[:3] == ["method", "params", "opts"]
    absorb = inspect.signature(ClientSession._absorb_tool_listing).parameters
    assert list(absorb)[:2] == ["self", "result"]
    assert absorb["complete"].kind is inspect.Parameter.KEYWORD_ONLY


def test_keep_meta_key_keeps_the_given_value_and_the_rest_of_the_stamp() -> None:
    session = _client_session()
    stamped: list[dict[str, Any]] = []

    def connection_stamp(data: dict[str, Any], options: Any) -> None:
        meta = data.setdefault("params", {}).setdefault("_meta", {})
        meta.update({CLIENT_CAPABILITIES_META_KEY: {"connection": {}}, "version": VERSION})
        stamped.append(data)

    session._stamp = connection_stamp
    client: Any = SimpleNamespace(session=session)
    assert sdk_internals.keep_meta_key(client, CLIENT_CAPABILITIES_META_KEY)
    given = {"method": "tools/call", "params": {"_meta": {CLIENT_CAPABILITIES_META_KEY: {"a": 1}}}}
    session._stamp(given, {})
    plain: dict[str, Any] = {"method": "tools/list"}
    session._stamp(plain, {})
    assert given["params"]["_meta"] == {CLIENT_CAPABILITIES_META_KEY: {"a": 1}, "version": VERSION}
    assert plain["params"]["_meta"][CLIENT_CAPABILITIES_META_KEY] == {"connection": {}}
    assert len(stamped) == 2


def test_absorb_tools_takes_one_page() -> None:
    session = _client_session()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = mcp_types.Tool(name="t", input_schema={"type": "object"}, output_schema=schema)
    sdk_internals.absorb_tools(SimpleNamespace(session=session), [tool])  # type: ignore[arg-type]
    assert session._tool_output_schemas == {"t": schema}


def test_a_server_session_reaches_its_connections_state() -> None:
    connection = Connection.from_envelope(VERSION, None, None)
    session = ServerSession(None, connection)  # type: ignore[arg-type]
    state = sdk_internals.connection_state(SimpleNamespace(session=session))
    assert state is connection.state and isinstance(state, dict)


def test_the_http_session_manager_keeps_its_sessions_and_lifespan_state() -> None:
    server: Server[Any] = Server("shape")
    assert sdk_internals.open_sessions(server) == 0 and sdk_internals.lifespan_state(server) is None
    server.streamable_http_app()
    manager = server.session_manager
    assert isinstance(manager, StreamableHTTPSessionManager)
    assert server._session_manager is manager  # type: ignore[attr-defined]
    assert isinstance(manager._server_instances, dict)
    assert manager._lifespan_state is None  # set while its lifespan runs
    manager._lifespan_state = state = object()
    assert sdk_internals.lifespan_state(server) == (manager, state)
    manager._server_instances["s"] = None  # type: ignore[assignment]
    assert sdk_internals.open_sessions(server) == 1


def test_the_request_span_parts_keep_their_shape() -> None:
    middleware = sdk_internals.OpenTelemetryMiddleware
    assert ServerMiddleware in middleware.__mro__  # the gateway's RequestSpans extends it
    assert _parameters(middleware.__call__) == ["self", "ctx", "call_next"]
    assert {"name", "kind", "attributes", "context"} <= set(_parameters(sdk_internals.otel_span))
    assert _parameters(sdk_internals.extract_trace_context) == ["meta"]
    assert sdk_internals.extract_trace_context(None) is None
