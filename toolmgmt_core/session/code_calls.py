"""Code mode's meta-tools for one session: ``run_code`` and ``tool_search``'s signatures.

``run_code`` runs the model's program in the sandbox (:mod:`toolmgmt_core.calls.code`); each
call it makes goes through a call pipeline of its own over this session (:class:`_InnerSite`),
so it is resolved, checked against the policy, validated, approved, run and reported as any
call is, except that its whole value goes to the program rather than to the model: nothing is
cut or recorded in the session's result account. Only what the program hands back (its output
and last value) reaches the model, cut to the result budget like any result.

A call that needs approval from a framework that pauses (a LangGraph interrupt, PydanticAI's
deferred tools) pauses the program: its snapshot is kept with the conversation under the code's
digest, and the same ``run_code`` call, resumed with the human's answer, carries on from that
call (the calls before it never run again).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

import toolmgmt_core.session.meta_tools as meta
from toolmgmt_core.calls.budget import ResultBudget, SessionBudget
from toolmgmt_core.calls.code import (
    CodeLimits,
    PausedProgram,
    ProgramToolError,
    code_names,
    python_signature,
    run_program,
)
from toolmgmt_core.calls.context import CallContext
from toolmgmt_core.calls.execution import ToolResult
from toolmgmt_core.calls.pipeline import CallPipeline, ToolRun
from toolmgmt_core.events import ProgramFinished, ProgramStarted
from toolmgmt_core.model.errors import InvalidArgumentsError, ToolCallError, ToolExecutionError
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.policy.steps import ApprovalRequest
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_core.runtime.control import is_control_flow

__all__ = ["CodeCalls", "code_digest"]

MAX_CODE_CHARS = 20_000
"""Longest program ``run_code`` takes."""

_ERROR_TYPES = {"retry": "ValueError", "denied": "PermissionError", "failed": "RuntimeError"}
_HUGE = 10**9


def code_digest(code: str) -> str:
    """The key a paused program is kept under: its code's digest."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class _WholeValues(SessionBudget):
    """A program's own account: its calls' values are never cut (the sandbox's memory limit
    bounds them) and never count against the session's result budget."""

    def budget_for(self, tool: Tool | None = None) -> int:
        return _HUGE


class _InnerSite:
    """The session as the pipeline of a program's calls sees it."""

    def __init__(self, session: Any, budget: SessionBudget) -> None:
        self.session = session
        self.result_budget = budget

    @property
    def conversation(self) -> str:
        return str(self.session.conversation)

    @property
    def policy(self) -> PolicyView:
        return self.session.policy  # type: ignore[no-any-return]

    @property
    def goal(self) -> str | None:
        return self.session.goal  # type: ignore[no-any-return]

    async def answer(self, name: Any, arguments: Any, context: CallContext) -> ToolRun:
        # A program calls tools (it searches with search_tools): any the session may see,
        # listed or not.
        return ToolRun(self.resolve(name), arguments)

    def resolve(self, name: Any) -> Tool:
        return self.session.resolve(name)  # type: ignore[no-any-return]

    def schema_hint(self, tool: Tool) -> str:
        return f" search_tools({tool.name!r}) gives its parameters."


class _Host:
    """A program's calls, answered through the session's pipeline (see the module docstring)."""

    def __init__(self, calls: CodeCalls, budget: SessionBudget, context: CallContext) -> None:
        session = calls.session
        self.calls = calls
        self.pipeline = CallPipeline(
            _InnerSite(session, budget),
            timeout=session.manager.execution.timeout,
            encoding=session.manager.encoding,
            events=session.manager.events,
        )
        self.context = context
        """run_code's own context, with the approver its program's calls ask."""
        self.count = 0
        self.tokens = 0

    async def call(self, name: Any, arguments: Any) -> Any:
        if not isinstance(name, str):
            raise ProgramToolError("TypeError", "call_tool(name, arguments): name must be a str")
        name = code_names(self.calls.session.manager.catalog).original(name)
        self.count += 1
        inner_id = f"{self.context.call_id or 'run_code'}.{self.count}"
        # In a task of its own (as a tool's call is), so what it sets stays its own.
        call = self.pipeline.call(name, arguments, inner_id, context=self.context)
        result = await asyncio.ensure_future(call)
        if result.paused is not None:  # the program waits at this call for the caller's answer
            raise result.paused
        self.tokens += result.original_tokens
        if result.is_error:
            message = result.error.message if result.error is not None else result.content
            raise ProgramToolError(_ERROR_TYPES.get(result.outcome, "RuntimeError"), message)
        return result.value

    async def search(self, query: Any) -> Any:
        if not isinstance(query, str) or not query.strip():
            raise ProgramToolError(
                "ValueError", "search_tools(query): query must be a non-empty str"
            )
        try:
            return self.calls.search_answer({"query": query})["found"]
        except ToolCallError as exc:
            raise ProgramToolError("ValueError", exc.message) from None

    def parameter_names(self, name: str) -> Sequence[str] | None:
        session = self.calls.session
        name = code_names(session.manager.catalog).original(name)
        tool = session.manager.planner.lookup(name, session.can_see)
        if tool is None:
            return None
        properties = (
            tool.parameters.get("properties") if isinstance(tool.parameters, Mapping) else None
        )
        return list(properties) if isinstance(properties, Mapping) else []


class _CountingApprover:
    """The framework's approver, counting the answers it gave in this ``run_code`` call (a
    resumed program replays them first, where the framework answers by order: LangGraph)."""

    def __init__(self, approver: Any, before: int) -> None:
        self.approver = approver
        self.answered = before

    async def __call__(self, request: ApprovalRequest) -> Any:
        try:
            verdict = self.approver(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except ToolCallError:  # an answer too: the human said no
            self.answered += 1
            raise
        self.answered += 1
        return verdict


class CodeCalls:
    """``run_code`` and code mode's ``tool_search`` answer for one session."""

    def __init__(self, session: Any, meta_calls: Any) -> None:
        self.session = session
        self.meta_calls = meta_calls

    @property
    def limits(self) -> CodeLimits:
        limits = getattr(self.session.effective_mode, "code_limits", None)
        return limits if isinstance(limits, CodeLimits) else CodeLimits()

    def search_answer(self, args: dict[str, Any]) -> dict[str, Any]:
        """``tool_search`` in code mode: the found tools as Python signatures."""
        found = self.meta_calls.find(args)
        if isinstance(found, dict):
            return found  # nothing matched: the note says what to try
        catalog = self.session.manager.catalog
        names = code_names(catalog)
        tools = [self.session.present(catalog.get(h.name)) for h in found]
        return {
            "found": "\n".join(python_signature(t, names.alias(t.name)) for t in tools),
            "note": "Call them in run_code: `await name(arg=...)`.",
        }

    async def run_code(self, args: dict[str, Any], context: CallContext) -> ToolResult:
        session = self.session
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            raise InvalidArgumentsError(
                'run_code needs "code": a Python program (await call_tool(name, arguments)).',
                tool_name=meta.RUN_CODE,
            )
        if len(code) > MAX_CODE_CHARS:
            raise InvalidArgumentsError(
                f"run_code takes programs of at most {MAX_CODE_CHARS:,} characters, got "
                f"{len(code):,}: do less per program.",
                tool_name=meta.RUN_CODE,
            )
        key = code_digest(code)
        paused = session.take_program(key)
        call_id = context.call_id
        budget = _WholeValues(ResultBudget(encoding=session.manager.encoding))
        outer = context.approver
        before = paused.approvals if paused is not None else 0
        counting = _CountingApprover(outer, before) if outer is not None else None
        # The program's calls ask the framework's approver through the counter (and not the
        # framework's own marker: that decides calls of the framework's tools, not these).
        host = _Host(self, budget, context.replace(approver=counting, requires=None))
        replay = getattr(outer, "replay", None)
        if replay is not None and before:
            replay(before)  # the framework answers by order: its earlier answers come first

        async def on_pause(program: PausedProgram) -> None:
            program.approvals = counting.answered if counting is not None else 0
            await session.keep_program(key, program)

        events = session.manager.events
        started = ProgramStarted(session.conversation, call_id, paused is not None)
        clock = time.monotonic()
        if events:
            events.emit(started)
        try:
            outcome = await run_program(
                code,
                host,
                self.limits,
                paused=paused,
                on_pause=on_pause,
                client=context.client or session.conversation,  # its share of the workers
            )
        except BaseException as exc:
            if events:
                events.emit(
                    ProgramFinished(
                        session.conversation,
                        started,
                        "paused" if is_control_flow(exc) else "interrupted",
                        host.count,
                        host.tokens,
                        0,
                        time.monotonic() - clock,
                        type(exc).__name__,
                    )
                )
            raise
        if outcome.error is None:
            result = await session.pipeline.shape(self._tool(), outcome.text, None, call_id)
        else:
            error: ToolCallError = (
                InvalidArgumentsError(outcome.text, tool_name=meta.RUN_CODE)
                if outcome.error == "syntax"
                else ToolExecutionError(
                    f"The program stopped: {outcome.text}",
                    tool_name=meta.RUN_CODE,
                )
            )
            result = session.pipeline.error_result(meta.RUN_CODE, error)
        if events:
            events.emit(
                ProgramFinished(
                    session.conversation,
                    started,
                    result.outcome,
                    host.count,
                    host.tokens,
                    result.tokens,
                    time.monotonic() - clock,
                    None,
                )
            )
        return result

    def _tool(self) -> Tool:
        tool = self.session.meta_tool(meta.RUN_CODE)
        return tool if tool is not None else meta.run_code_tool()
