"""toolmgmt MCP gateway: one MCP server with three meta-tools over many upstream MCP servers.

Usage::

    toolmgmt serve --config gateway.toml                 # stdio
    toolmgmt serve --config gateway.toml --transport http --port 8765 --token "$TOKEN"

or from Python::

    from toolmgmt_mcp import Gateway, load_config

    async with Gateway(load_config("gateway.toml")) as gateway:
        async with mcp.Client(gateway.server) as client:   # in-process, for tests
            await client.call_tool("discover_tools", {})

The gateway exposes exactly ``discover_tools``, ``get_tool_schema`` and ``execute_tool`` (a
:class:`toolmgmt_core.ToolManager` in gateway mode, one session per MCP client session); each
upstream server is a domain whose tools keep their names behind it (``notes_delete_note``).
"""

from __future__ import annotations

from toolmgmt_core.compat import require_version

MIN_MCP_VERSION = "2.0"
"""The oldest ``mcp`` SDK the gateway supports (``MCPServer``, ``mcp.Client``)."""

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f'The MCP gateway needs the MCP SDK: pip install "toolmgmt[mcp]" (mcp>={MIN_MCP_VERSION}).'
    ) from exc
require_version("mcp", MIN_MCP_VERSION, "mcp")

from toolmgmt_mcp.config import (  # noqa: E402 - after the SDK check
    ClientConfig,
    GatewayConfig,
    GatewaySettings,
    PolicyConfig,
    UpstreamConfig,
)
from toolmgmt_mcp.config_file import load_config, parse_config  # noqa: E402
from toolmgmt_mcp.server import BearerTokenMiddleware, Gateway, serve, serve_sync  # noqa: E402
from toolmgmt_mcp.upstreams import UpstreamManager, UpstreamStatus  # noqa: E402

__all__ = [
    "BearerTokenMiddleware",
    "ClientConfig",
    "Gateway",
    "GatewayConfig",
    "GatewaySettings",
    "MIN_MCP_VERSION",
    "PolicyConfig",
    "UpstreamConfig",
    "UpstreamManager",
    "UpstreamStatus",
    "load_config",
    "parse_config",
    "serve",
    "serve_sync",
]
