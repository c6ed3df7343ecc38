"""An upstream with side effects for code mode's run guards at the gateway: destructive
``wipe``, ``drop_all``, ``purge`` and ``transfer``; read-only ``confirm`` (asks its user the
protocol's way), ``balance``, ``next_target`` (``./cache`` first, then the production paths),
``stamp`` (a counter) and ``export_all``; ``set_balance``; ``reset``; and ``runs`` (each
tool's calls in this process, with their arguments, as JSON).

Run as ``python ops_server.py`` (stdio).
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as t
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import ServerMessageMetadata
from mcp.types import ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

server = MCPServer("ops")
RUNS: dict[str, list[Any]] = {}
STATE = {"balance": 100, "targets": 0, "stamps": 0}
DESTRUCTIVE = ToolAnnotations(destructive_hint=True)
READ_ONLY = ToolAnnotations(read_only_hint=True)


def _ran(tool: str, arguments: Any = None) -> None:
    RUNS.setdefault(tool, []).append(arguments)


@server.tool(annotations=DESTRUCTIVE, structured_output=False)
def wipe(target: str) -> str:
    """Wipe a database."""
    _ran("wipe", target)
    return f"wiped {target}"


@server.tool(annotations=DESTRUCTIVE, structured_output=False)
def drop_all() -> str:
    """Drop every table."""
    _ran("drop_all")
    return "dropped"


@server.tool(annotations=DESTRUCTIVE, structured_output=False)
def purge(paths: list[str]) -> str:
    """Delete these paths for good."""
    _ran("purge", paths)
    return f"purged {len(paths)}"


@server.tool(annotations=DESTRUCTIVE, structured_output=False)
def transfer(amount: int) -> str:
    """Move money out of the account."""
    _ran("transfer", amount)
    STATE["balance"] -= amount
    return f"moved {amount}"


@server.tool(annotations=READ_ONLY, structured_output=False)
def balance() -> int:
    """The account's balance."""
    _ran("balance")
    return STATE["balance"]


@server.tool(structured_output=False)
def set_balance(amount: int) -> str:
    """Set the account's balance (a deposit arrived)."""
    STATE["balance"] = amount
    return "set"


@server.tool(annotations=READ_ONLY, structured_output=False)
def next_target() -> str:
    """The paths to clean up next (a JSON list)."""
    _ran("next_target")
    STATE["targets"] += 1
    return json.dumps(["./cache"] if STATE["targets"] == 1 else ["/prod", "/backups"])


@server.tool(annotations=READ_ONLY, structured_output=False)
def stamp() -> str:
    """A stamp that differs on each call."""
    _ran("stamp")
    STATE["stamps"] += 1
    return f"stamp {STATE['stamps']}"


@server.tool(annotations=READ_ONLY, structured_output=False)
def export_all() -> str:
    """Export every record."""
    _ran("export_all")
    return "exported"


def _question(question: str) -> t.ElicitRequest:
    """The question ``confirm`` asks, naming what it asks about."""
    return t.ElicitRequest(
        params=t.ElicitRequestFormParams(
            message=f"Go on? ({question})",
            requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        )
    )


@server.tool(annotations=READ_ONLY, structured_output=False)
async def confirm(question: str, ctx: Context) -> Any:
    """Ask the user to confirm; their answer."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get("go")
        if answer is None:
            return t.InputRequiredResult(input_requests={"go": _question(question)})
        content = answer.content or {}  # type: ignore[union-attr]
    else:
        metadata = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
        asked = await ctx.request_context.session.send_request(
            _question(question), t.ElicitResult, metadata=metadata
        )
        content = asked.content or {}
    _ran("confirm", question)
    return f"confirmed: {content.get('ok')}"


@server.tool(structured_output=False)
def reset() -> str:
    """Forget every run and start over (balance 100, first target ``./cache``)."""
    RUNS.clear()
    STATE.update(balance=100, targets=0, stamps=0)
    return "reset"


@server.tool(structured_output=False)
def runs() -> str:
    """Each tool's calls in this process, with their arguments (JSON)."""
    return json.dumps(RUNS)


if __name__ == "__main__":
    server.run()
