"""What an approver is asked about and what it may answer.

:class:`ApprovalRequest` names one call: the tool, its arguments (and their digest,
:func:`arguments_digest`), why it needs approval and, for a call a code-mode program makes, the
run and the place in it the answer is bound to. :class:`ApprovalEdit` and
:class:`ApprovalResponse` are the answers besides yes and no. An answer is bound to the call it
was asked about: an edit may change the call's arguments, never its tool
(:attr:`ApprovalEdit.tool_name`, checked by the call pipeline through every integration).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._model.tool import Tool

__all__ = [
    "ApprovalCallback",
    "ApprovalEdit",
    "ApprovalRequest",
    "ApprovalResponse",
    "arguments_digest",
]


def arguments_digest(arguments: Any) -> str:
    """The SHA-256 of a call's full arguments, arrays and objects included, as canonical JSON
    (keys sorted): two calls get the same digest only when every argument is the same."""
    body = json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver is asked about: one call of one tool.

    The core builds it (the call pipeline); the approver reads it. A call made from a code-mode
    program also carries its run's identity and the run's sealed state, which an integration whose
    framework pauses must keep in that framework's own state and hand back on resume.
    """

    tool: Tool
    """The tool about to run (as the model sees it)."""
    arguments: Mapping[str, Any]
    """The validated arguments of the call."""
    reason: str
    """Why approval is needed (the tool is destructive, or which step's pattern asks for it)."""
    run_id: str | None = None
    """Set by the core for a call a code-mode program makes: the id of the program's run
    (minted when ``run_code`` starts, never derived from the code). An approval is bound to
    (``run_id``, :attr:`call_index`, the tool, :attr:`arguments_digest`). None for a direct
    call."""
    call_index: int | None = None
    """Set by the core with :attr:`run_id`: which of the run's calls this is (1 for its first)."""
    resume_state: str | None = None
    """Set by the core with :attr:`run_id`: the run's sealed state, paused at this call (its
    snapshot, the calls already settled, the run's identity and expiry; tamper-evident). An
    integration whose approval pauses the framework (a LangGraph interrupt, PydanticAI's deferred
    call, the gateway's input-required result) keeps it in the framework's state and hands it back
    with the resumed ``run_code`` call as :attr:`CallContext.resume_state
    <toolmgmt_core.integration.CallContext.resume_state>`; nobody reads inside it."""

    @property
    def arguments_digest(self) -> str:
        """:func:`arguments_digest` of :attr:`arguments`: what an approval is bound to."""
        return arguments_digest(dict(self.arguments))


@dataclass(frozen=True)
class ApprovalEdit:
    """An approver's yes to other arguments (HumanInTheLoopMiddleware's ``edit``): the call runs
    with ``arguments`` instead, checked again (visibility, validation) but not asked about
    again, and the model's result says what ran."""

    arguments: Mapping[str, Any]
    """The arguments to run the call with (validated like the model's)."""
    tool_name: str | None = None
    """The tool the reviewer's edit names, when the framework's edit names one (LangChain's
    ``edited_action.name``, a ``tool_name`` in PydanticAI's ``override_args``); set by the
    integration. The core refuses the call, and nothing runs, when it is not the tool asked about:
    an edit changes arguments only, never the tool."""


@dataclass(frozen=True)
class ApprovalResponse:
    """An approver's answer in the tool's place (HumanInTheLoopMiddleware's ``respond``): the
    tool does not run and the model gets ``message`` as the call's result."""

    message: str
    """The result the model gets."""

    def __post_init__(self) -> None:
        if not isinstance(self.message, str):
            raise TypeError(f"ApprovalResponse.message must be a str, got {self.message!r}.")


ApprovalCallback = Callable[
    [ApprovalRequest],
    "bool | ApprovalEdit | ApprovalResponse | Awaitable[bool | ApprovalEdit | ApprovalResponse]",
]
"""Decides one call: return (or resolve to) True to run it, False to refuse it, an
:class:`ApprovalEdit` to run it with other arguments or an :class:`ApprovalResponse` to answer
it without running the tool."""
