"""Where a paused program's state lives in PydanticAI: the message history.

A code-mode program whose call needs approval defers its ``run_code`` call; the core hands the
run's sealed state with the request (``ApprovalRequest.resume_state``). It is kept in the
``metadata`` of the model response that made the ``run_code`` call (``ModelResponse.metadata``,
which PydanticAI keeps with the history and never sends to a model), under
``metadata["toolmgmt"]["runs"][tool call id]``, beside what the approval was asked about (the
run, the call's place in it, the tool and its arguments' digest). Resumed with
``message_history`` and ``DeferredToolResults``, by any agent, toolset or worker, the call finds
it there: the program carries on from its paused call and no call settled before the pause runs
again. The state is sealed by the core, which refuses a changed, forged, expired or foreign one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelResponse, ToolCallPart

from toolmgmt_core import ApprovalRequest

__all__ = ["asked_about", "keep_run", "kept_run"]

_KEY = "toolmgmt"


def _response(ctx: RunContext[Any]) -> ModelResponse | None:
    """The model response in the history that made the call being run."""
    for message in reversed(ctx.messages):
        if isinstance(message, ModelResponse) and any(
            isinstance(p, ToolCallPart) and p.tool_call_id == ctx.tool_call_id
            for p in message.parts
        ):
            return message
    return None


def _binding(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "run_id": request.run_id,
        "call_index": request.call_index,
        "tool": request.tool.name,
        "arguments_digest": request.arguments_digest,
    }


def keep_run(ctx: RunContext[Any], request: ApprovalRequest) -> None:
    """Keep the sealed state of the program paused at ``request`` with the call's response."""
    response = _response(ctx)
    if response is None or request.resume_state is None or ctx.tool_call_id is None:
        return
    metadata = dict(response.metadata or {})
    ours = dict(metadata.get(_KEY) or {})
    runs = dict(ours.get("runs") or {})
    runs[ctx.tool_call_id] = {"resume_state": request.resume_state, **_binding(request)}
    response.metadata = {**metadata, _KEY: {**ours, "runs": runs}}


def kept_run(ctx: RunContext[Any]) -> Mapping[str, Any] | None:
    """What :func:`keep_run` kept for the call being run, or None."""
    response = _response(ctx)
    ours = (response.metadata or {}).get(_KEY) if response is not None else None
    runs = ours.get("runs") if isinstance(ours, Mapping) else None
    kept = runs.get(ctx.tool_call_id) if isinstance(runs, Mapping) else None
    if not isinstance(kept, Mapping) or not isinstance(kept.get("resume_state"), str):
        return None
    return kept


def asked_about(kept: Mapping[str, Any], request: ApprovalRequest) -> bool:
    """Whether ``request`` is the call the kept approval was asked about: the same run, place
    in it, tool and arguments (an approval answers that call only)."""
    return all(kept.get(k) == v for k, v in _binding(request).items())
