"""A hand-written stdio MCP server (plain JSON-RPC, 2025-06-18 handshake) with malformed tools.

Not built on the SDK, so it can send what the SDK's own servers refuse to: ``ping`` is fine;
``broken``'s input schema is not valid JSON Schema; ``weird``'s parameters are an array, which
fails the SDK client's model of a tool. The gateway must keep ``ping`` and skip the other two.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

TOOLS = [
    {
        "name": "ping",
        "description": "Answer pong.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "broken",
        "description": "A tool whose schema is not valid JSON Schema.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "bogus"}}},
    },
    {
        "name": "weird",
        "description": "A tool whose parameters are not an object.",
        "inputSchema": {"type": "array"},
    },
]


class RpcError(Exception):
    """A request answered with a JSON-RPC error of this ``code`` and ``message``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def call(name: str) -> dict:
    """The result of calling tool ``name``."""
    if name == "ping":
        return {"content": [{"type": "text", "text": "pong"}]}
    return {"content": [{"type": "text", "text": f"cannot run {name}"}], "isError": True}


def answer(request: dict, tools: list[dict] = TOOLS, call: Callable[[str], dict] = call) -> dict:
    """The result for one JSON-RPC request, listing ``tools`` and running them with ``call``."""
    method = request.get("method")
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tools}
    if method == "tools/call":
        return call(request["params"]["name"])
    raise LookupError(method)


def main(answer: Callable[[dict], dict] = answer) -> None:
    """Answer JSON-RPC requests on stdin with ``answer`` (a ``LookupError``: method not found)."""
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        try:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
        except LookupError as exc:
            error = {"code": -32601, "message": f"Method not found: {exc}"}
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": error}
        except RpcError as exc:
            error = {"code": exc.code, "message": exc.message}
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": error}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
