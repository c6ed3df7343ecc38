"""The cross-door suite's tools as an upstream MCP server (``tests/support/doors/shop.py``), for
the gateway's door (``bill_order``'s failure reported with its message, secrets and all, as a
tool's deliberate error: the SDK keeps a crash's text on the server); plus ``ask_human`` (asks
its user the protocol's way), ``close_account`` (destructive, and asks its user why) and
``runs`` (how often each tool ran in this process).

Run as ``python shop_server.py`` (stdio) or ``python shop_server.py --http PORT``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # tests/, for support.doors

import mcp.types as t  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.shared.message import ServerMessageMetadata  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from support.doors.shop import DESTRUCTIVE, Shop  # noqa: E402

server = MCPServer("shop")
SHOP = Shop()


def _reported(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` whose failure the SDK passes on with its message (a ``ToolError``)."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except RuntimeError as exc:
            raise ToolError(str(exc)) from exc

    return run


for function in SHOP.functions():
    if function.__name__ == "bill_order":
        function = _reported(function)
    hints = ToolAnnotations(destructive_hint=True) if function.__name__ in DESTRUCTIVE else None
    server.tool(annotations=hints, structured_output=False)(function)

QUESTION = t.ElicitRequest(
    params=t.ElicitRequestFormParams(
        message="Which order?",
        requested_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
    )
)


WHY = t.ElicitRequest(
    params=t.ElicitRequestFormParams(
        message="Why?",
        requested_schema={"type": "object", "properties": {"reason": {"type": "string"}}},
    )
)


async def _ask(ctx: Context, key: str, question: t.ElicitRequest) -> Any:
    """The user's answer (its content), or the input-required result asking it (2026)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get(key)
        if answer is None:
            return t.InputRequiredResult(input_requests={key: question})
        return answer.content or {}  # type: ignore[union-attr]
    metadata = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    asked = await ctx.request_context.session.send_request(
        question, t.ElicitResult, metadata=metadata
    )
    return asked.content or {}


@server.tool(structured_output=False)
async def ask_human(question: str, ctx: Context) -> Any:
    """Ask the user a question and return the answer."""
    answer = await _ask(ctx, "order", QUESTION)
    if isinstance(answer, t.InputRequiredResult):
        return answer
    return f"the user says: {answer.get('order_id')}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True), structured_output=False)
async def close_account(account_id: str, ctx: Context) -> Any:
    """Close a customer account for good; asks the user why."""
    answer = await _ask(ctx, "why", WHY)
    if isinstance(answer, t.InputRequiredResult):
        return answer
    SHOP.runs["close_account"] += 1
    return f"closed {account_id}: {answer.get('reason')}"


@server.tool()
def runs() -> str:
    """How often each tool ran in this process (JSON)."""
    return json.dumps(dict(SHOP.runs))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
