"""Approval through LangGraph's ``interrupt()``, in ``HumanInTheLoopMiddleware``'s per-call shape.

A call that needs approval under the policy pauses the graph with a per-call request
(``{"type": "tool_approval", "tool_call_id", "name", "args", "description",
"allowed_decisions"}``) and a ``response_schema`` a client can render, as HITL's
``interrupt_mode="per_call"`` does. The answer it resumes with is one of HITL's decisions:

- ``{"type": "approve"}`` (or True): the call runs;
- ``{"type": "reject", "message": ...}`` (or False): it never runs, and the model is told why;
- ``{"type": "edit", "edited_action": {"name": <the same tool>, "args": {...}}}``: it runs with
  the reviewer's arguments (checked against the tool's schema before the answer is taken, and
  by the session again), and the model's result says so;
- ``{"type": "respond", "message": ...}``: it never runs; the message is its result.

``{"decisions": [one of them]}`` (HITL's batched answer) works too. An answer of any other
shape is refused before it is saved, as LangGraph does for HITL's: the resume raises
``pydantic.ValidationError`` naming what is wrong, and the same pause can be answered again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

from langgraph.types import interrupt
from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    StrictBool,
    ValidationError,
    WithJsonSchema,
)
from typing_extensions import NotRequired, TypedDict

from toolmgmt_core import (
    ApprovalDeniedError,
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
    ConfigError,
    Tool,
    ToolCallError,
)
from toolmgmt_core.integration import ApprovalAsker, validate_arguments

__all__ = [
    "DECISIONS",
    "ToCaller",
    "interrupt_approver",
]

DECISIONS = ("approve", "edit", "reject", "respond")
"""The HumanInTheLoopMiddleware decisions an approval request takes."""

_EDIT_CHECK_SECONDS = 2.0


class ToCaller(Exception):
    """An error for whoever invokes the agent, not for the model: the middleware raises
    ``error`` from ``invoke`` (LangGraph's ``ValidationError`` for an answer that is not a
    decision, which was not saved; a ``ConfigError``)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _Approve(TypedDict):
    type: Literal["approve"]


class _Reject(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str]


class _Respond(TypedDict):
    type: Literal["respond"]
    message: str


def _response_schema(tool: Tool, allowed: tuple[str, ...] = DECISIONS) -> Any:
    """The answers a request for ``tool`` takes: one of the ``allowed`` decisions (an edit pinned
    to this tool, its arguments checked against its schema), ``{"decisions": [one]}``, or a
    plain bool (when approve and reject are both allowed)."""

    def checked(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return validate_arguments(tool, arguments, time_limit=_EDIT_CHECK_SECONDS)
        except ToolCallError as exc:
            raise ValueError(exc.message) from None

    # Built per tool (the edit's name and arguments are this tool's), so functional syntax.
    arguments = Annotated[
        dict[str, Any], WithJsonSchema(dict(tool.parameters)), AfterValidator(checked)
    ]
    typed_dict: Any = TypedDict  # built at run time: not a type mypy can check
    action = typed_dict("EditedAction", {"name": Literal[tool.name], "args": arguments})
    edit = typed_dict("EditDecision", {"type": Literal["edit"], "edited_action": action})
    kinds = {"approve": _Approve, "edit": edit, "reject": _Reject, "respond": _Respond}
    choices: Any = Union[tuple(kinds[k] for k in allowed)]  # noqa: UP007
    decision = Annotated[choices, Discriminator("type")]
    one = Annotated[list[decision], Field(min_length=1, max_length=1)]
    batch = typed_dict("Decisions", {"decisions": one})
    if "approve" in allowed and "reject" in allowed:
        return Union[StrictBool, decision, batch]  # noqa: UP007
    return Union[decision, batch]  # noqa: UP007


def _allowed(config: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The decisions HITL's ``interrupt_on`` entry allows (all four when it names none)."""
    named = (config or {}).get("allowed_decisions") or DECISIONS
    return tuple(d for d in DECISIONS if d in named)


def interrupt_approver(
    call: Mapping[str, Any],
    *,
    reviewed: bool = False,
    interrupt_on: Mapping[str, Any] | None = None,
) -> ApprovalAsker:
    """Approval through ``interrupt()``, in HumanInTheLoopMiddleware's per-call shape.

    ``reviewed``: a HumanInTheLoopMiddleware the middleware was not told about has reviewed
    calls in this agent; rather than ask a human a second time, the run stops with a
    ``ConfigError`` naming the fix. ``interrupt_on``: the HITL's, whose ``allowed_decisions``
    for a tool are the only answers its request takes, as HITL's own for the call by name.

    A code-mode program's pause keeps its run's sealed state in the interrupt's value
    (``value["toolmgmt"]["resume_state"]``), so in the checkpoint
    (:mod:`toolmgmt_langchain.checkpoint` reads it back on resume).
    """

    def approve(request: ApprovalRequest) -> bool | ApprovalEdit | ApprovalResponse:
        name = request.tool.name
        if reviewed:
            raise ToCaller(
                ConfigError(
                    f"{name!r} needs approval, and this agent's HumanInTheLoopMiddleware "
                    "reviews tool calls too, so the human may already have approved this one. "
                    "Pass that middleware to ToolManagerMiddleware(manager, approval=hitl) "
                    "(list it first): calls it reviews are not asked about again, the others "
                    "are; or approval=False to leave approval to the manager."
                )
            )
        allowed = _allowed((interrupt_on or {}).get(name))
        value = {
            "type": "tool_approval",
            "tool_call_id": call["id"],
            "name": name,
            "args": request.arguments,
            "description": f"Tool execution requires approval ({request.reason})\n\n"
            f"Tool: {name}\nArgs: {request.arguments}",
            "allowed_decisions": list(allowed),
        }
        if request.resume_state is not None:
            value["toolmgmt"] = {"resume_state": request.resume_state}
        try:
            answer = interrupt(value, response_schema=_response_schema(request.tool, allowed))
        except ValidationError as exc:
            raise ToCaller(exc) from exc
        return _verdict(answer, name)

    def replay(count: int) -> None:
        """Take the first ``count`` answers of this call's resume: a code-mode program resumed
        from its snapshot asks only its pending call, and LangGraph answers by order."""
        for _ in range(count):
            interrupt(None)

    approve.replay = replay  # type: ignore[attr-defined]
    return approve


def _verdict(answer: Any, name: str) -> bool | ApprovalEdit | ApprovalResponse:
    """A reviewer's (validated) answer as the approver's verdict."""
    if isinstance(answer, bool):
        return answer
    if "decisions" in answer:  # a batched HITLResponse for this one call
        answer = answer["decisions"][0]
    kind = answer["type"]
    if kind == "edit":  # the core refuses an edit naming another tool, as the schema does
        action = answer["edited_action"]
        return ApprovalEdit(action["args"], tool_name=action["name"])
    if kind == "respond":
        return ApprovalResponse(answer["message"])
    reason = answer.get("message", "").strip() if kind == "reject" else None
    if reason:
        raise ApprovalDeniedError(
            # The user's words quoted as a sentence of their own, whatever they end with.
            f"The user rejected the call to {name!r}, so it did not run. The user said: "
            f"{json.dumps(reason, ensure_ascii=False)}. Do not retry it unless the user asks.",
            tool_name=name,
        )
    return kind == "approve"
