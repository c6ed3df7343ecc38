"""Asking for approval: the manager's callback, or the framework's own way.

Which calls need approval is the policy's decision (:meth:`PolicyView.approval_reason
<toolmgmt_core.PolicyView.approval_reason>`: a step's ``require_approval``, or a destructive
tool). Who is asked is decided here, once, for every door:

1. the manager's :class:`~toolmgmt_core.Approval` callback, when it has one;
2. else the framework's approver, declared by the adapter for the call it runs
   (:func:`framework_approval`): it pauses the run the framework's way (LangGraph
   ``interrupt()``, PydanticAI ``ApprovalRequired``) and answers with the human's decision
   when the run resumes;
3. else nobody can say yes, and the call is refused (fail closed).

An approver that raises refuses the call, unless what it raised is the framework's own pause
(declared with :func:`~toolmgmt_core.model.control.passthrough`), which reaches the caller.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from toolmgmt_core.model.control import reraise_control_flow
from toolmgmt_core.model.errors import ApprovalDeniedError
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.policy.steps import ApprovalEdit, ApprovalRequest, ApprovalResponse
from toolmgmt_core.policy.view import PolicyView

__all__ = [
    "ApprovalAsker",
    "Verdict",
    "ask_approval",
    "framework_approval",
    "framework_approver",
]

Verdict = ApprovalEdit | ApprovalResponse | None
"""An approver's yes: None (run the call as it is), an edit or an answer in the tool's place."""

ApprovalAsker = Callable[
    [ApprovalRequest],
    "bool | ApprovalEdit | ApprovalResponse | Awaitable[bool | ApprovalEdit | ApprovalResponse]",
]
"""An approver: True to run the call; False (or ``ApprovalDeniedError``) to refuse it; an
``ApprovalEdit`` or ``ApprovalResponse`` (the human changed the call, or answered it); or a
framework's pause (an exception declared with ``passthrough``) to ask a human first."""

_APPROVER: ContextVar[ApprovalAsker | None] = ContextVar("toolmgmt_approver", default=None)


@contextlib.contextmanager
def framework_approval(approver: ApprovalAsker | None) -> Iterator[None]:
    """Within this block, calls that need approval ask ``approver`` when the manager has no
    approval callback of its own (None: nobody to ask, so such calls are refused).

    The approver gets the :class:`~toolmgmt_core.ApprovalRequest` after the call's arguments
    were validated, so the human sees exactly what will run.
    """
    token = _APPROVER.set(approver)
    try:
        yield
    finally:
        _APPROVER.reset(token)


def framework_approver() -> ApprovalAsker | None:
    """The approver of the :func:`framework_approval` block around this point, or None."""
    return _APPROVER.get()


async def ask_approval(
    policy: PolicyView, tool: Tool, arguments: Mapping[str, Any], reason: str
) -> Verdict:
    """Ask whoever approves calls of ``tool`` (see the module docstring) about this one.

    Args:
        policy: the session's view (its :class:`~toolmgmt_core.Approval`).
        tool: the tool, as the model sees it.
        arguments: the validated arguments.
        reason: why the call needs approval (``policy.approval_reason(tool)``).

    Returns:
        None to run the call as it is; an :class:`~toolmgmt_core.ApprovalEdit` (run it with
        other arguments) or :class:`~toolmgmt_core.ApprovalResponse` (answer it without
        running the tool).

    Raises:
        ApprovalDeniedError: the approver said no, failed, or there is none; the message tells
            the model not to retry unchanged.
    """
    name = tool.name
    approver = policy.approval.callback or framework_approver()
    if approver is None:
        raise ApprovalDeniedError(
            f"Calling {name!r} needs approval ({reason}) and nobody here can give it, so it did "
            "not run. Choose another tool or ask the user.",
            tool_name=name,
        )
    request = ApprovalRequest(tool, dict(arguments), reason)
    try:
        decision = approver(request)
        if inspect.isawaitable(decision):
            decision = await decision
    except ApprovalDeniedError:
        raise
    except Exception as exc:
        reraise_control_flow(exc)
        raise ApprovalDeniedError(
            f"The approval check for {name!r} failed ({type(exc).__name__}), so the call "
            "did not run.",
            tool_name=name,
        ) from exc
    if isinstance(decision, ApprovalEdit | ApprovalResponse):
        return decision
    if decision is not True:
        raise ApprovalDeniedError(
            f"The call to {name!r} was refused by the approver and did not run. Do not retry "
            "it unchanged; ask the user or choose another approach.",
            tool_name=name,
        )
    return None
