"""Approval through LangGraph's ``interrupt()``, in ``HumanInTheLoopMiddleware``'s shape.

A call that needs approval under the policy pauses the graph with a per-call request
(``{"type": "tool_approval", "tool_call_id", "name", "args", "description"}``); the answer it
resumes with (``{"type": "approve"}``, ``{"type": "reject", "message": ...}``,
``{"decisions": [...]}``, True or False) is the approver's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import interrupt

from toolmgmt_core.control import ApprovalAsker
from toolmgmt_core.errors import ApprovalDeniedError
from toolmgmt_core.policy_steps import ApprovalRequest

__all__ = [
    "interrupt_approver",
]

_DECISIONS = ("approve", "reject")
"""The HumanInTheLoopMiddleware decisions an approval request takes."""


def interrupt_approver(call: Mapping[str, Any]) -> ApprovalAsker:
    """Approval through ``interrupt()``, in HumanInTheLoopMiddleware's per-call shape."""

    def approve(request: ApprovalRequest) -> bool:
        name = request.tool.name
        answer = interrupt(
            {
                "type": "tool_approval",
                "tool_call_id": call["id"],
                "name": name,
                "args": request.arguments,
                "description": f"Tool execution requires approval ({request.reason})\n\n"
                f"Tool: {name}\nArgs: {request.arguments}",
                "allowed_decisions": list(_DECISIONS),
            }
        )
        return _approved(answer, name)

    return approve


def _approved(answer: Any, name: str) -> bool:
    """A reviewer's answer as the approver's verdict (a rejection's reason goes to the model)."""
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        if len(answer["decisions"]) == 1:  # a batched HITLResponse for this one call
            answer = answer["decisions"][0]
    if isinstance(answer, bool):
        return answer
    kind = answer.get("type") if isinstance(answer, Mapping) else None
    if kind == "approve":
        return True
    if kind == "reject":
        reason = answer.get("message")
        if isinstance(reason, str) and reason.strip():
            raise ApprovalDeniedError(
                f"The user rejected the call to {name!r}, so it did not run: {reason.strip()} "
                "Do not retry it unless the user asks.",
                tool_name=name,
            )
        return False
    raise ValueError(  # the approval check fails closed: the call does not run
        f"Cannot read the answer {answer!r} to the approval of {name!r}: resume with "
        f"{{'type': one of {list(_DECISIONS)}}} (a 'reject' may carry a 'message'), "
        "{'decisions': [that]}, True or False."
    )
