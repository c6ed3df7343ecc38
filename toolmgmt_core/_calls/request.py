"""One call as data: the :class:`CallRequest` a session hands down to the call pipeline.

The session resolves the name a model used once and plans its tool list once, then builds one
immutable request: the tool, its arguments, what the integration knows about the call (its
:class:`~toolmgmt_core._calls.context.CallContext`) and what the call is judged and measured
against (its :class:`CallView`). The pipeline runs it and returns a result; it never asks the
session for more. A meta-tool that runs another tool (``execute_tool``, ``call_tool``) answers
with another request (:meth:`CallRequest.inner`), and a program's calls in code mode are
requests too, to the same pipeline::

    session.call(name) ─> CallRequest(tool, arguments, context, view)
                       ─> CallPipeline.run(request) ─> ToolResult
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._model.errors import ToolCallError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.view import PolicyView

__all__ = ["CallRequest", "CallView"]


@dataclass(frozen=True)
class CallView:
    """What a call is judged and measured against, as its session had it when the call was
    made (a program's calls have a view of their own: whole values, no meta-tools)."""

    conversation: str
    """What the call's events name its conversation."""
    policy: PolicyView
    """The policy view in force (approval, description overrides)."""
    budget: SessionBudget
    """The account the result is cut to and recorded in."""
    can_see: Callable[[Tool], bool]
    """Whether a tool may run here: asked again after a human looked at an approval, since
    the policy may have changed meanwhile."""
    find_hint: Callable[[], str] = str
    """How to find tools in the session's mode, appended to a refusal (asked only then)."""
    goal: str | None = None
    """The user's goal when known (for a summariser)."""
    meta: Callable[[CallRequest, Any], Awaitable[Any]] | None = None
    """Who answers the session's meta-tools (a ``MetaAnswers`` of the pipeline's module;
    None: the caller calls tools only)."""


@dataclass(frozen=True)
class CallRequest:
    """One call, resolved and ready to run (see the module docstring)."""

    name: str
    """The name the model used (what a refusal and the events name)."""
    arguments: Any
    """The arguments as the model gave them (validated by the pipeline)."""
    context: CallContext
    """What the integration knows about the call."""
    view: CallView
    """What the call is judged and measured against."""
    tool: Tool | None = None
    """The tool the name resolved to (a meta-tool when :attr:`meta`); None when refused."""
    refusal: ToolCallError | None = None
    """Why the call cannot run (the name resolves to nothing this caller may call)."""
    meta: bool = False
    """Whether :attr:`tool` is one of the session's meta-tools (answered by ``view.meta``)."""
    hint: Callable[[], str] = str
    """Where a model whose arguments fail validation finds the tool's parameters (asked only
    then)."""

    def inner(self, tool: Tool, arguments: Any, hint: Callable[[], str] = str) -> CallRequest:
        """The call of ``tool`` a meta-tool of this request runs (``execute_tool``'s)."""
        return dataclasses.replace(
            self, name=tool.name, tool=tool, arguments=arguments, meta=False, hint=hint
        )
