"""A small upstream MCP server for the gateway tests: notes, plus tools that misbehave on purpose.

Run as ``python notes_server.py`` (stdio) or ``python notes_server.py --http PORT`` (streamable
HTTP on 127.0.0.1). ``NOTES_FAIL_IF_EXISTS=path``: exit at start while that file exists.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

if os.environ.get("NOTES_FAIL_IF_EXISTS") and os.path.exists(os.environ["NOTES_FAIL_IF_EXISTS"]):
    print("notes_server: refusing to start (marker file present)", file=sys.stderr)
    sys.exit(3)

server = MCPServer("notes", instructions="A tiny notes store.")
NOTES: dict[str, str] = {}


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def create_note(title: str, body: str) -> str:
    """Create a note with a title and a body. Returns the note's title."""
    NOTES[title] = body
    return title


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_note(title: str) -> dict[str, str]:
    """Read one note by its title."""
    if title not in NOTES:
        raise ToolError(f"no note titled {title!r}")
    return {"title": title, "body": NOTES[title]}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes() -> list[str]:
    """List the titles of every note."""
    return sorted(NOTES)


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_note(title: str) -> str:
    """Delete a note by its title."""
    NOTES.pop(title, None)
    return "deleted"


@server.tool()
def echo(token: str) -> str:
    """Echo a token back."""
    return token


@server.tool()
async def slow_echo(token: str, delay: float) -> str:
    """Echo a token back after ``delay`` seconds without blocking other calls."""
    import anyio

    await anyio.sleep(delay)
    return token


@server.tool()
def big_result(items: int = 2000) -> dict[str, object]:
    """Return a large JSON result (for truncation tests)."""
    return {"items": [{"id": i, "text": f"entry number {i} " * 4} for i in range(items)]}


@server.tool()
def crash() -> str:
    """Kill this server process in the middle of the call."""
    os._exit(1)


@server.tool()
def hang(seconds: float = 3600.0) -> str:
    """Block the whole server (its event loop) for ``seconds``."""
    time.sleep(seconds)
    return "woke up"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new tool named ``name`` and announce that the tool list changed."""

    def extra(text: str) -> str:
        return text.upper()

    server.add_tool(extra, name=name, description=f"Shout {name}: upper-case the text.")
    if ctx.protocol_version and ctx.protocol_version >= "2026":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
