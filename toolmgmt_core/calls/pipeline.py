"""One call, from the name a model used to the result it gets: the call pipeline.

Every integration (LangChain, PydanticAI, LiteLLM, the MCP gateway, a plain ``session.call``) runs a
call through :class:`CallPipeline`, so a call is approved, validated, run, shaped and reported
the same way wherever it came from::

    resolve ─> policy ─> validate and repair ─> approval ─> run (timeout, pool) ─> shape ─> record
       │                                                                              │
       └── meta-tools answer here instead (their inner ``execute_tool`` joins at policy) ┘

The result is a :class:`~toolmgmt_core.ToolResult` whose :attr:`~toolmgmt_core.ToolResult.outcome`
(``success``, ``retry``, ``denied``, ``failed``) each integration maps to its framework's own form;
an error is shaped once, here, to the tool's budget. A call that paused for its caller to answer
first (:class:`~toolmgmt_core.runtime.control.CallPaused`, raised by what the integration handed
down) ends here too, as the outcome ``paused``, with no result. What the pipeline needs of its
session is the :class:`CallSite` protocol; what the integration knows about the call travels down
with it as a :class:`~toolmgmt_core.calls.context.CallContext` (the call id, the framework's
approver, what a handler that asks for it gets); what it did goes to the manager's listeners
(:mod:`toolmgmt_core.events`). A meta-tool that runs another tool (``execute_tool``,
``call_tool``) answers with a :class:`ToolRun`, which the pipeline runs here, in the same call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from toolmgmt_core.calls.approval import ask_approval, call_approval_reason
from toolmgmt_core.calls.budget import SessionBudget
from toolmgmt_core.calls.context import NO_CONTEXT, CallContext
from toolmgmt_core.calls.execution import CallClock, ToolResult, run_handler
from toolmgmt_core.calls.results import edited_result, error_result, shape_result
from toolmgmt_core.calls.truncation import truncate_result
from toolmgmt_core.calls.validation import check_arguments, clip
from toolmgmt_core.events import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    EventHub,
    PolicyDenied,
    ResultTruncated,
)
from toolmgmt_core.model.content import ContentResult
from toolmgmt_core.model.errors import (
    ApprovalDeniedError,
    ToolCallError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.model.tool import META_TOOL_NAMES, Tool
from toolmgmt_core.policy.steps import ApprovalEdit, ApprovalResponse
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_core.runtime.control import CallPaused, reraise_control_flow

__all__ = ["CallPipeline", "CallSite", "ToolRun"]

logger = logging.getLogger("toolmgmt")

_DENIALS = frozenset({"not_permitted", "tool_denied"})


@dataclass(frozen=True)
class ToolRun:
    """A meta-tool's answer that is a call of another tool (``execute_tool``, ``call_tool``):
    the pipeline runs ``tool`` with ``arguments`` in the same call, from policy on."""

    tool: Tool
    """The resolved tool to run."""
    arguments: Any
    """Its arguments, as the model gave them (validated by the run)."""


class CallSite(Protocol):
    """What the pipeline asks of the session it runs a call for (a ``ToolSession``; a
    program's calls in code mode have a site of their own): what a call of a name comes to,
    whether a resolved tool may still run, and what its result is measured against."""

    @property
    def conversation(self) -> str: ...
    @property
    def policy(self) -> PolicyView: ...
    @property
    def result_budget(self) -> SessionBudget: ...
    @property
    def goal(self) -> str | None: ...
    async def answer(self, name: Any, arguments: Any, context: CallContext) -> ToolResult | ToolRun:
        """A meta-tool's answer, or the tool to run (a direct call's tool, as the model may
        call it now; ``execute_tool``'s); raises the core's refusal (a ``ToolCallError``)."""

    def resolve(self, name: Any) -> Tool:
        """The tool ``name`` stands for, while the session may see it; else raises the
        refusal a lookup of the name gets."""

    def schema_hint(self, tool: Tool) -> str:
        """Where a model whose arguments failed validation finds ``tool``'s parameters."""


def _same_tool(edit: ApprovalEdit, tool: Tool) -> None:
    """Refuse an edit naming another tool than the one asked about: an edit changes arguments
    only (an integration hands the framework's edited tool name down as ``ApprovalEdit.tool_name``).

    Raises:
        ApprovalDeniedError: the edit swaps the tool; nothing runs.
    """
    if edit.tool_name is not None and edit.tool_name != tool.name:
        raise ApprovalDeniedError(
            f"The approval of the call to {tool.name!r} came back as an edit naming "
            f"{clip(repr(edit.tool_name))}: an edit may change the call's arguments, never its "
            "tool, so nothing ran. Ask the user to approve the call they want.",
            tool_name=tool.name,
        )


class CallPipeline:
    """The calls of one session, each through the same steps (see the module docstring).

    Args:
        site: the session.
        timeout: seconds a call may take when its tool sets none (None: no limit).
        encoding: the tokenizer results are measured in.
        events: the manager's listeners.
    """

    def __init__(
        self, site: CallSite, *, timeout: float | None, encoding: str, events: EventHub
    ) -> None:
        self.site = site
        self.timeout = timeout
        self.encoding = encoding
        self.events = events

    async def call(
        self,
        name: str,
        arguments: Any,
        call_id: str | None = None,
        *,
        context: CallContext = NO_CONTEXT,
    ) -> ToolResult:
        """Run a meta-tool or a tool as the model asked; never raises for the model's mistakes
        (a framework's control-flow signal passes). ``call_id``, when given, replaces the
        context's.

        With listeners, :class:`~toolmgmt_core.events.CallStarted` and
        :class:`~toolmgmt_core.events.CallFinished` are emitted here, in this task, around the
        whole call (``interrupted`` when a signal or a cancellation ends it)."""
        if call_id is not None and call_id != context.call_id:
            # Most calls carry nothing else: a new context is cheaper than a changed copy.
            is_bare = context is NO_CONTEXT
            context = CallContext(call_id=call_id) if is_bare else context.replace(call_id=call_id)
        if not self.events:
            return await self._answer(name, arguments, context)
        meta = isinstance(name, str) and name in META_TOOL_NAMES
        started = CallStarted(self.site.conversation, str(name), context.call_id, arguments, meta)
        self.events.emit(started)
        clock = time.monotonic()
        try:
            result = await self._answer(name, arguments, context)
        except BaseException as exc:  # a framework's signal, a cancellation: reported, passed on
            self._finished(started, None, time.monotonic() - clock, type(exc).__name__)
            raise
        self._finished(started, result, time.monotonic() - clock)
        return result

    async def _answer(self, name: str, arguments: Any, context: CallContext) -> ToolResult:
        try:
            answer = await self.site.answer(name, arguments, context)
            if isinstance(answer, ToolRun):  # the named tool (directly, or execute_tool's)
                return await self.execute(answer.tool, answer.arguments, context)
            return answer  # a meta-tool's own answer
        except CallPaused as pause:  # the caller answers first: no result, nothing recorded
            return ToolResult(str(pause), tool_name=str(name), paused=pause)
        except ToolCallError as exc:
            return self.error_result(exc.tool_name or str(name), exc)
        except Exception as exc:  # a bug must not crash the agent's loop; log it loudly
            reraise_control_flow(exc)
            logger.exception("toolmgmt: internal error while calling %r", name)
            error = ToolUnavailableError(
                f"Tool {clip(repr(name))} could not be run because of an internal error "
                f"({type(exc).__name__}); try another tool.",
                tool_name=str(name),
            )
            return self.error_result(str(name), error)

    async def execute(
        self, tool: Tool, arguments: Any, context: CallContext = NO_CONTEXT
    ) -> ToolResult:
        """Policy, validation, approval, the handler and the result's shape for a resolved
        ``tool`` (``execute_tool`` joins here).

        The tool's timeout covers validation, the handler and shaping the result (not the time
        an approver takes). Once the handler has run, nothing turns the call into a failure: a
        result that cannot be shaped is reported done, with a short note in its place.
        """
        site = self.site
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        clock = CallClock(timeout)
        edited: ApprovalEdit | None = None
        try:
            site.resolve(tool.name)  # still visible, or refused as a lookup of its name would be
            hint = site.schema_hint(tool)
            checked = await check_arguments(tool, arguments, hint=hint, time_limit=clock.left())
            reason = call_approval_reason(site.policy, tool, checked, context.requires)
            if reason is not None:
                with clock.paused():
                    verdict = await self._approve(tool, checked, reason, context)
                site.resolve(tool.name)  # the policy may have changed while a human looked
                if isinstance(verdict, ApprovalResponse):  # answered in the tool's place
                    return await self.shape(tool, verdict.message, clock.left(), context.call_id)
                if isinstance(verdict, ApprovalEdit):
                    _same_tool(verdict, tool)
                    edited = verdict
                    checked = await check_arguments(
                        tool, verdict.arguments, hint=hint, time_limit=clock.left()
                    )
            left = clock.left()
            if left is not None and left <= 0:
                raise ToolTimeoutError(
                    f"Tool {tool.name!r} did not start within {timeout:g}s (checking its "
                    "arguments took the time) and did not run. Try simpler arguments.",
                    tool_name=tool.name,
                )
            value = await run_handler(tool, checked, left, stated=timeout, context=context)
        except ToolCallError as exc:
            return self.error_result(tool.name, exc)
        result = await self.shape(tool, value, clock.left(), context.call_id)
        return result if edited is None else edited_result(result, checked, self.encoding)

    async def _approve(
        self, tool: Tool, arguments: Mapping[str, Any], reason: str, context: CallContext
    ) -> Any:
        site = self.site
        if self.events:
            self.events.emit(ApprovalAsked(site.conversation, tool.name, reason))
        try:
            verdict = await ask_approval(
                site.policy, site.policy.present(tool), arguments, reason, context.approver
            )
        except ToolCallError:
            if self.events:
                self.events.emit(ApprovalAnswered(site.conversation, tool.name, "denied"))
            raise
        if self.events:
            kind = (
                "edited"
                if isinstance(verdict, ApprovalEdit)
                else "answered"
                if isinstance(verdict, ApprovalResponse)
                else "approved"
            )
            self.events.emit(ApprovalAnswered(site.conversation, tool.name, kind))
        return verdict

    async def shape(
        self, tool: Tool, value: Any, seconds: float | None, call_id: str | None = None
    ) -> ToolResult:
        """The model-facing result of a call that ran, cut to its budget and recorded (under
        ``call_id``)."""
        account = self.site.result_budget
        media: list[Any] = []
        if isinstance(value, ContentResult):
            media = value.media()
            value = value.value()
        exhausted = account.exceeded
        result = await shape_result(
            account, tool, value, seconds, goal=self.site.goal, call_id=call_id
        )
        if media:
            result.media = media
        if self.events:
            self._shaped(tool, result, account, exhausted)
        return result

    def fit(self, name: str | None, text: str) -> str:
        """A result this session did not run (an app's own tool's, one in a transcript) cut to
        the budget a call of ``name`` would have, the same way; not recorded."""
        tool = self.site.policy.catalog.find(name) if isinstance(name, str) else None
        budget = self.site.result_budget.budget
        strategy = budget.strategy_for(tool)
        return truncate_result(text, budget.per_result(tool), strategy, encoding=self.encoding).text

    def error_result(self, name: str, error: ToolCallError) -> ToolResult:
        """``error`` as the model gets it: one shape through every integration, cut to the tool's
        budget."""
        tool = self.site.policy.catalog.find(name) if isinstance(name, str) else None
        limit = self.site.result_budget.budget.per_result(tool)
        if self.events and error.code in _DENIALS:
            self.events.emit(PolicyDenied(self.site.conversation, name, error.code))
        return error_result(name, error, limit=limit, encoding=self.encoding)

    def _shaped(
        self, tool: Tool, result: ToolResult, account: SessionBudget, exhausted: bool
    ) -> None:
        conversation = self.site.conversation
        if result.truncated:
            strategy = result.truncation or account.budget.strategy_for(tool)
            self.events.emit(
                ResultTruncated(
                    conversation, tool.name, result.original_tokens, result.tokens, strategy
                )
            )
        limit = account.budget.session_tokens
        if limit is not None and not exhausted and account.exceeded:
            self.events.emit(BudgetExhausted(conversation, tool.name, limit, account.used))

    def _finished(
        self,
        started: CallStarted,
        result: ToolResult | None,
        duration: float,
        signal: str | None = None,
    ) -> None:
        if result is not None and result.paused is not None:  # no result either, as a signal
            signal = type(result.paused).__name__
            result = None
        if result is None:  # interrupted: no result, nothing to measure
            self.events.emit(
                CallFinished(
                    started.conversation,
                    started,
                    started.tool,
                    "interrupted",
                    None,
                    None,
                    duration,
                    0,
                    0,
                    False,
                    signal=signal,
                )
            )
            return
        error = result.error
        self.events.emit(
            CallFinished(
                started.conversation,
                started,
                result.tool_name or started.tool,
                result.outcome,
                error.code if error is not None else None,
                error.kind if error is not None else None,
                duration,
                result.tokens,
                result.original_tokens,
                result.truncated,
                result.content,
            )
        )
