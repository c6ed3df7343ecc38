"""An MCP server (2026) whose first call of ``lookup`` answers that the caller's listing of the
tool is stale (``HEADER_MISMATCH``: its ``Mcp-Param`` headers no longer match the schema); a
call after that runs. Run as ``python stale_server.py`` (stdio)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import HEADER_MISMATCH

server = MCPServer("stale")
calls = 0


@server.tool()
def lookup() -> str:
    """Look something up; the first call says the listing is stale."""
    global calls
    calls += 1
    if calls == 1:
        raise MCPError(HEADER_MISMATCH, "Mcp-Param headers do not match the tool's schema")
    return f"found on call {calls}"


if __name__ == "__main__":
    server.run()
