"""One call, from the request a session built to the result it gets: the call pipeline.

Every integration (LangChain, PydanticAI, LiteLLM, the MCP gateway, a plain ``session.call``) runs a
call through :class:`CallPipeline`, so a call is approved, validated, run, shaped and reported
the same way wherever it came from. The session resolves the name and plans its list once and
hands down one immutable :class:`~toolmgmt_core._calls.request.CallRequest`; the pipeline never
asks the session for more::

    CallRequest ─> policy ─> validate, repair ─> approval ─> run (timeout, pool) ─> shape, record
        │
        └─> a meta-tool's answer (``view.meta``); execute_tool's inner request joins at policy

The result is a :class:`~toolmgmt_core.ToolResult` whose :attr:`~toolmgmt_core.ToolResult.outcome`
(``success``, ``retry``, ``denied``, ``failed``) each integration maps to its framework's own form;
an error is shaped once, here, to the tool's budget. A call that paused for its caller to answer
first (:class:`~toolmgmt_core._runtime.control.CallPaused`, raised by what the integration handed
down) ends here too, as the outcome ``paused``, with no result. What the integration knows about the
call travels in the request's :class:`~toolmgmt_core._calls.context.CallContext`; what it did goes
to the manager's listeners (:mod:`toolmgmt_core._events`). One pipeline serves every session of a
manager: what differs per call is in the request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from toolmgmt_core._calls.approval import ask_approval, call_approval_reason
from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.execution import CallClock, ToolResult, run_handler
from toolmgmt_core._calls.request import CallRequest, CallView
from toolmgmt_core._calls.resolution import resolve_tool
from toolmgmt_core._calls.results import edited_result, error_result, shape_result
from toolmgmt_core._calls.truncation import truncate_result
from toolmgmt_core._calls.validation import check_arguments, clip
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._events import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    EventHub,
    PolicyDenied,
    ResultTruncated,
)
from toolmgmt_core._model.content import ContentResult
from toolmgmt_core._model.errors import (
    ApprovalDeniedError,
    InvalidArgumentsError,
    ToolCallError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.steps import ApprovalEdit, ApprovalResponse
from toolmgmt_core._runtime.control import CallPaused, reraise_control_flow

__all__ = ["CallPipeline", "MetaAnswers"]

logger = logging.getLogger("toolmgmt")

_DENIALS = frozenset({"not_permitted", "tool_denied"})


class MetaAnswers(Protocol):
    """Who answers a session's meta-tools (``CallView.meta``): given the request and the
    pipeline that runs it, their answer, or (``execute_tool``, ``call_tool``) the inner request
    the pipeline runs in the same call."""

    def __call__(
        self, request: CallRequest, pipeline: CallPipeline
    ) -> Awaitable[ToolResult | CallRequest]: ...


async def _check(
    request: CallRequest, tool: Tool, arguments: Any, time_limit: float | None
) -> dict[str, Any]:
    """``arguments`` checked against ``tool``'s schema; a refusal ends with where the model
    finds the parameters (the request's hint, worked out only then)."""
    try:
        return await check_arguments(tool, arguments, time_limit=time_limit)
    except InvalidArgumentsError as exc:
        raise _hinted(exc, request) from None


def _hinted(error: InvalidArgumentsError, request: CallRequest) -> InvalidArgumentsError:
    """``error`` ending with where the model finds the parameters (the request's hint)."""
    error.message += request.hint()
    error.args = (error.message,)
    return error


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
    """The calls of a manager's sessions, each through the same steps (see the module
    docstring). Made once per manager (``ToolManager.pipeline``); what differs per call travels
    in its :class:`~toolmgmt_core._calls.request.CallRequest`.

    Args:
        catalog: the tools (a refusal's budget is its tool's).
        timeout: seconds a call may take when its tool sets none (None: no limit).
        encoding: the tokenizer results are measured in.
        events: the manager's listeners.
    """

    def __init__(
        self, catalog: ToolCatalog, *, timeout: float | None, encoding: str, events: EventHub
    ) -> None:
        self.catalog = catalog
        self.timeout = timeout
        self.encoding = encoding
        self.events = events

    async def run(self, request: CallRequest) -> ToolResult:
        """Run the request's meta-tool or tool; never raises for the model's mistakes (a
        framework's control-flow signal passes).

        With listeners, :class:`~toolmgmt_core._events.CallStarted` and
        :class:`~toolmgmt_core._events.CallFinished` are emitted here, in this task, around the
        whole call (``interrupted`` when a signal or a cancellation ends it)."""
        report = bool(self.events)
        name = request.name
        if report:
            started = CallStarted(
                request.view.conversation,
                name,
                request.context.call_id,
                request.arguments,
                request.meta,
            )
            self.events.emit(started)
            clock = time.monotonic()
        try:  # one frame, not two: each await below a frame costs it a resume
            try:
                if request.refusal is not None:
                    raise request.refusal
                meta = request.view.meta
                if request.meta and meta is not None:
                    answer = await meta(request, self)
                    if isinstance(answer, CallRequest):  # execute_tool's: the tool it names
                        answer = await self.execute(answer, report=report)
                    result = answer  # the tool's result, or a meta-tool's own answer
                else:
                    result = await self.execute(request, report=report)
            except CallPaused as pause:  # the caller answers first: no result, nothing recorded
                result = ToolResult(str(pause), tool_name=name, paused=pause)
            except ToolCallError as exc:
                result = self.error_result(exc.tool_name or name, exc, request.view)
            except Exception as exc:  # a bug must not crash the agent's loop; log it loudly
                reraise_control_flow(exc)
                logger.exception("toolmgmt: internal error while calling %r", name)
                error = ToolUnavailableError(
                    f"Tool {clip(repr(name))} could not be run because of an internal error "
                    f"({type(exc).__name__}); try another tool.",
                    tool_name=name,
                )
                result = self.error_result(name, error, request.view)
        except BaseException as exc:  # a framework's signal, a cancellation: reported, passed on
            if report:
                self._finished(started, None, time.monotonic() - clock, type(exc).__name__)
            raise
        if report:
            self._finished(started, result, time.monotonic() - clock)
        return result

    async def execute(self, request: CallRequest, *, report: bool | None = None) -> ToolResult:
        """Policy, validation, approval, the handler and the result's shape for the request's
        resolved tool (``execute_tool``'s inner request joins here); ``report``: whether the
        listeners want events (None: ask them).

        The tool's timeout covers validation, the handler and shaping the result (not the time
        an approver takes). Once the handler has run, nothing turns the call into a failure: a
        result that cannot be shaped is reported done, with a short note in its place.
        """
        tool, view, context = request.tool, request.view, request.context
        assert tool is not None, "a request to run names its tool"
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        clock = CallClock(timeout)
        edited: ApprovalEdit | None = None
        try:
            try:
                checked = await check_arguments(tool, request.arguments, time_limit=clock.left())
            except InvalidArgumentsError as exc:
                raise _hinted(exc, request) from None
            reason = call_approval_reason(view.policy, tool, checked, context.requires)
            if reason is not None:
                with clock.paused():
                    verdict = await self._approve(tool, checked, reason, request)
                if not view.can_see(tool):  # the policy may have changed while a human looked
                    resolve_tool(self.catalog, tool.name, view.can_see, view.find_hint())
                if isinstance(verdict, ApprovalResponse):  # answered in the tool's place
                    return await self.shape(
                        tool, verdict.message, clock.left(), request, report=report
                    )
                if isinstance(verdict, ApprovalEdit):
                    _same_tool(verdict, tool)
                    edited = verdict
                    checked = await _check(request, tool, verdict.arguments, clock.left())
            left = clock.left()
            if left is not None and left <= 0:
                raise ToolTimeoutError(
                    f"Tool {tool.name!r} did not start within {timeout:g}s (checking its "
                    "arguments took the time) and did not run. Try simpler arguments.",
                    tool_name=tool.name,
                )
            value = await run_handler(tool, checked, left, stated=timeout, context=context)
        except ToolCallError as exc:
            return self.error_result(tool.name, exc, view)
        result = await self.shape(tool, value, clock.left(), request, report=report)
        return result if edited is None else edited_result(result, checked, self.encoding)

    async def _approve(
        self, tool: Tool, arguments: Mapping[str, Any], reason: str, request: CallRequest
    ) -> Any:
        policy, conversation = request.view.policy, request.view.conversation
        if self.events:
            self.events.emit(ApprovalAsked(conversation, tool.name, reason))
        try:
            verdict = await ask_approval(
                policy, policy.present(tool), arguments, reason, request.context.approver
            )
        except ToolCallError:
            if self.events:
                self.events.emit(ApprovalAnswered(conversation, tool.name, "denied"))
            raise
        if self.events:
            kind = (
                "edited"
                if isinstance(verdict, ApprovalEdit)
                else "answered"
                if isinstance(verdict, ApprovalResponse)
                else "approved"
            )
            self.events.emit(ApprovalAnswered(conversation, tool.name, kind))
        return verdict

    async def shape(
        self,
        tool: Tool,
        value: Any,
        seconds: float | None,
        request: CallRequest,
        *,
        report: bool | None = None,
    ) -> ToolResult:
        """The model-facing result of a call that ran, cut to its view's budget and recorded
        (under the request's call id); ``report``: whether the listeners want events (None:
        ask them)."""
        view = request.view
        account = view.budget
        media: list[Any] = []
        if isinstance(value, ContentResult):
            media = value.media()
            value = value.value()
        exhausted = account.exceeded
        result = await shape_result(
            account, tool, value, seconds, goal=view.goal, call_id=request.context.call_id
        )
        if media:
            result.media = media
        if self.events if report is None else report:
            self._shaped(tool, result, account, exhausted, view.conversation)
        return result

    def fit(self, name: str | None, text: str, account: SessionBudget) -> str:
        """A result no pipeline ran (an app's own tool's, one in a transcript) cut to the
        budget a call of ``name`` would have in ``account``, the same way; not recorded."""
        tool = self.catalog.find(name) if isinstance(name, str) else None
        budget = account.budget
        strategy = budget.strategy_for(tool)
        return truncate_result(text, budget.per_result(tool), strategy, encoding=self.encoding).text

    def error_result(self, name: str, error: ToolCallError, view: CallView) -> ToolResult:
        """``error`` as the model gets it: one shape everywhere, cut to the tool's budget."""
        tool = self.catalog.find(name) if isinstance(name, str) else None
        limit = view.budget.budget.per_result(tool)
        if self.events and error.code in _DENIALS:
            self.events.emit(PolicyDenied(view.conversation, name, error.code))
        return error_result(name, error, limit=limit, encoding=self.encoding)

    def _shaped(
        self,
        tool: Tool,
        result: ToolResult,
        account: SessionBudget,
        exhausted: bool,
        conversation: str,
    ) -> None:
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
