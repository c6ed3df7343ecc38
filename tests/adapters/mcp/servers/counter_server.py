"""An upstream MCP server that counts how many times each call ran (replica tests, bench).

Run as ``python counter_server.py --http PORT`` (streamable HTTP on 127.0.0.1). ``bump`` and
``slow_bump`` are neither read-only nor idempotent: nothing may resend them, and ``runs`` tells
how many times a key was bumped, so a test proves a call ran exactly once.
"""

from __future__ import annotations

import sys
from collections import Counter

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("counter", instructions="Counts the calls it runs.")
RUNS: Counter[str] = Counter()
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


@server.tool(annotations=_WRITES)
def bump(key: str, words: int = 0) -> dict[str, object]:
    """Add one to the counter of ``key``; the answer carries ``words`` words of padding."""
    RUNS[key] += 1
    return {"key": key, "runs": RUNS[key], "padding": " ".join(["lorem"] * words)}


@server.tool(annotations=_WRITES)
async def slow_bump(key: str, delay: float) -> dict[str, object]:
    """Add one to the counter of ``key`` at once, then answer after ``delay`` seconds."""
    RUNS[key] += 1
    await anyio.sleep(delay)
    return {"key": key, "runs": RUNS[key]}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def runs(key: str) -> int:
    """How many times ``key`` was bumped."""
    return RUNS[key]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def tally() -> dict[str, object]:
    """How many keys were bumped, how many bumps in all, and the keys bumped more than once."""
    return {
        "keys": len(RUNS),
        "bumps": sum(RUNS.values()),
        "repeated": sorted(k for k, n in RUNS.items() if n > 1),
    }


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(token: str) -> str:
    """Echo a token back."""
    return token


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
