"""toolmgmt MCP adapter: upstream MCP servers (stdio or streamable HTTP) as catalog tools.

Usage::

    from toolmgmt_core import ToolCatalog
    from toolmgmt_mcp import UpstreamConfig, UpstreamManager

    catalog = ToolCatalog()
    notes = UpstreamConfig("notes", command="python", args=("notes_server.py",))
    async with UpstreamManager([notes], catalog):
        await catalog.get("notes_get_note").handler(title="x")

Each upstream is a domain whose tools keep their names behind it (``notes_get_note``). The MCP
gateway that serves such a catalog to MCP clients is its own package, ``toolmgmt_gateway``.
"""

from __future__ import annotations

from toolmgmt_core.integration import require_version

MIN_MCP_VERSION = "2.0"
"""The oldest ``mcp`` SDK supported (``MCPServer``, ``mcp.Client``)."""

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f'The MCP adapter needs the MCP SDK: pip install "toolmgmt[mcp]" (mcp>={MIN_MCP_VERSION}).'
    ) from exc
require_version("mcp", MIN_MCP_VERSION, "mcp")

from toolmgmt_mcp.upstream_config import UpstreamConfig  # noqa: E402
from toolmgmt_mcp.upstreams import Upstream, UpstreamManager, UpstreamStatus  # noqa: E402

__all__ = [
    "MIN_MCP_VERSION",
    "Upstream",
    "UpstreamConfig",
    "UpstreamManager",
    "UpstreamStatus",
]
