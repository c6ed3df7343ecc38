"""toolmgmt MCP gateway: one MCP server with three meta-tools over many upstream MCP servers.

Usage::

    toolmgmt serve --config gateway.toml                 # stdio
    toolmgmt serve --config gateway.toml --transport http --port 8765 --token "$TOKEN"

or from Python::

    from toolmgmt_gateway import Gateway, load_config

    async with Gateway(load_config("gateway.toml")) as gateway:
        async with mcp.Client(gateway.server) as client:   # in-process, for tests
            await client.call_tool("discover_tools", {})

The gateway exposes exactly ``discover_tools``, ``get_tool_schema`` and ``execute_tool`` (a
:class:`toolmgmt_core.ToolManager` in gateway mode, one session per MCP client session); each
upstream server is a domain whose tools keep their names behind it (``notes_delete_note``).
Its upstreams are the MCP adapter's (:mod:`toolmgmt_mcp`); this package adds the service
around them: configuration, authentication, admission, conversations, the relay of upstream
questions, metrics and the command line.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'The MCP gateway needs the MCP SDK: pip install "toolmgmt[gateway]".'
    ) from exc

# The MCP adapter checks the SDK's version (and names its floor).
from toolmgmt_mcp import MIN_MCP_VERSION  # noqa: E402

from toolmgmt_gateway.config import (  # noqa: E402
    ClientConfig,
    GatewayConfig,
    GatewaySettings,
    PolicyConfig,
    UpstreamConfig,
)
from toolmgmt_gateway.config_file import load_config, parse_config  # noqa: E402
from toolmgmt_gateway.server import BearerTokenMiddleware, Gateway, serve, serve_sync  # noqa: E402
from toolmgmt_gateway.upstreams import GatewayUpstreams, UpstreamStatus  # noqa: E402

__all__ = [
    "BearerTokenMiddleware",
    "ClientConfig",
    "Gateway",
    "GatewayConfig",
    "GatewaySettings",
    "GatewayUpstreams",
    "MIN_MCP_VERSION",
    "PolicyConfig",
    "UpstreamConfig",
    "UpstreamStatus",
    "load_config",
    "parse_config",
    "serve",
    "serve_sync",
]
