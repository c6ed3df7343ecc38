"""PydanticAI's ``approval_required`` in the core's terms.

A wrapped toolset's ``approval_required`` predicate (``ApprovalRequiredToolset``) asks about a
call's arguments when PydanticAI calls the tool; the tool's definition says nothing of it. Handed
down as the call's approval marker (``CallContext.requires``), the session asks it on every path
to a wrapped tool (``call_tool``, a code-mode program's call) and approves the call the core's
way, with a request naming the call; the approved call then reaches the wrapper as approved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.toolsets.abstract import ToolsetTool

from toolmgmt_core import Tool
from toolmgmt_core.integration import ApprovalMarker

__all__ = ["approval_marker", "approval_required"]


def approval_required(
    toolset: Any, ctx: RunContext[Any], tool: ToolsetTool[Any], arguments: Mapping[str, Any]
) -> bool:
    """Whether an ``approval_required`` wrapper around ``toolset`` asks about this call."""
    while toolset is not None:
        asks = getattr(toolset, "approval_required_func", None)
        if callable(asks) and asks(ctx, tool.tool_def, dict(arguments)):
            return True
        toolset = getattr(toolset, "wrapped", None)
    return False


def approval_marker(
    tools: Callable[[], Mapping[str, tuple[Any, ToolsetTool[Any]]] | None], ctx: RunContext[Any]
) -> ApprovalMarker:
    """The marker of a run whose wrapped tools ``tools`` lists (name: its toolset and tool)."""

    def requires(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        entry = (tools() or {}).get(tool.name) if tool.metadata.get("pydantic_ai") else None
        if entry is None or not approval_required(entry[0], ctx, entry[1], arguments):
            return None
        return "PydanticAI approval_required"

    return requires
