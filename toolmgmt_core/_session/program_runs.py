"""One ``run_code`` call's program run: its identity, its pauses and their answers.

A run is (conversation, principal, run id); the id is minted when the run starts, never taken
from the code (:mod:`toolmgmt_core._calls.code.runs`). Each call the program makes is a request
to the session's call pipeline, under ``run_code``'s view with the program's own account (whole
values). A call that needs the framework's approval keeps the program at that call (the driver
dumps its snapshot), and the framework's approver is asked from here, with the run's sealed state
in the request (``ApprovalRequest.resume_state``):

- an approver that answers at once (a callback, a 2025 MCP client asked mid-call): the program
  carries on from its snapshot, the answer bound to that one call (run id, call index, tool,
  digest of its arguments) and used once;
- an approver that pauses the framework (a LangGraph interrupt, PydanticAI's deferred call, the
  gateway's input-required result): the pause passes on, and the integration keeps the sealed state
  in its framework's state; resumed with it (``CallContext.resume_state``), the run is checked
  (seal, expiry, conversation, principal, code), recorded as resumed (once), the approver asked
  again about the same call, and the program carries on from its snapshot: the calls before it
  never run again.

Any other pause at a call (an upstream's question at the gateway: the core's ``CallPaused``)
carries the sealed state too (``CallPaused.resume_state``). An integration that keeps no state of
its own (``CallContext.keeps_state`` False) has it kept for it in the conversation, by the call's
id.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from toolmgmt_core._calls.approval import RunApprover, who_approves
from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.code import (
    PausedProgram,
    ProgramOutcome,
    ProgramToolError,
    code_names,
    run_program,
)
from toolmgmt_core._calls.code.runs import PendingCall, ProgramStateError, RunState, new_run_id
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._calls.request import CallRequest, CallView
from toolmgmt_core._model.errors import ToolCallError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.callers import check_caller
from toolmgmt_core._policy.verdicts import ApprovalRequest, arguments_digest
from toolmgmt_core._runtime.control import CallPaused, is_control_flow, is_pause

__all__ = ["ProgramRun", "WholeValues"]

_ERROR_TYPES = {"retry": "ValueError", "denied": "PermissionError", "failed": "RuntimeError"}
_HUGE = 10**9


class WholeValues(SessionBudget):
    """A program's own account: its calls' values are never cut (the sandbox's memory limit
    bounds them) and never count against the session's result budget."""

    def budget_for(self, tool: Tool | None = None) -> int:
        return _HUGE


class _AskOutside(CallPaused):
    """A program's call needs the framework's approval: the program is kept at that call and
    the framework is asked from ``run_code`` itself, with the run's sealed state in hand."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(f"approval asked for {request.tool.name!r}")
        self.request = request


class _Prepared:
    """The framework's answer about the call a program waits at, given to that call alone."""

    def __init__(self, pending: PendingCall, verdict: Any, error: BaseException | None) -> None:
        self.pending = pending
        self.verdict = verdict
        self.error = error

    def matches(self, request: ApprovalRequest) -> bool:
        pending = self.pending
        return (pending.index, pending.tool, arguments_digest(dict(pending.arguments))) == (
            request.call_index,
            request.tool.name,
            request.arguments_digest,
        )


class _AskedAt(RunApprover):
    """The approver of the program's call ``index``."""

    def __init__(self, approver: _ProgramApprover, index: int) -> None:
        self.approver = approver
        self.index = index

    async def __call__(self, request: ApprovalRequest) -> Any:
        return await self.approver.ask(self.index, request)


class _ProgramApprover(RunApprover):
    """The approver a program's calls ask (see the module docstring): the answer prepared for
    the call the program waits at, else the program is kept at the call (:class:`_AskOutside`)."""

    def __init__(self, host: _Host, prepared: _Prepared | None) -> None:
        self.host = host
        self.prepared = prepared

    async def __call__(self, request: ApprovalRequest) -> Any:
        return await self.ask(self.host.count, request)

    async def ask(self, index: int, request: ApprovalRequest) -> Any:
        """The answer for the program's call ``index`` (calls run at once under
        ``asyncio.gather``: each asks with its own index, not the latest)."""
        bound = dataclasses.replace(request, run_id=self.host.run_id, call_index=index)
        prepared = self.prepared
        if prepared is None or not prepared.matches(bound):  # not the call it was given for
            raise _AskOutside(bound)
        self.prepared = None  # used once
        if prepared.error is not None:
            raise prepared.error
        return prepared.verdict


class _Host:
    """A program's calls, answered through the session's pipeline (see the module docstring)."""

    def __init__(
        self, calls: Any, pipeline: CallPipeline, view: CallView, context: CallContext, run_id: str
    ) -> None:
        self.calls = calls
        self.pipeline = pipeline
        self.view = view
        """What the program's calls are judged against: ``run_code``'s view, whole values."""
        self.context = context
        """run_code's own context, with the approver its program's calls ask."""
        self.run_id = run_id
        self.count = 0
        """The program's tool calls so far (the current one's index)."""
        self.current: tuple[int, str, Any] | None = None
        """The call being answered: (index, name, arguments)."""
        self.tokens = 0

    async def call(self, name: Any, arguments: Any, index: int) -> Any:
        if not isinstance(name, str):
            raise ProgramToolError("TypeError", "call_tool(name, arguments): name must be a str")
        name = code_names(self.calls.session.manager.catalog).original(name)
        # The sandbox's number for the call, not a count here: a resumed program runs its
        # paused calls again in another order, and each keeps the index its approval names.
        self.count = max(self.count, index)
        self.current = (index, name, arguments)
        inner_id = f"{self.context.call_id or 'run_code'}.{index}"
        context = self.context
        if isinstance(context.approver, _ProgramApprover):  # asked with this call's own index
            context = context.replace(approver=_AskedAt(context.approver, index))
        request = self._request(name, arguments, context.replace(call_id=inner_id))
        # In a task of its own (as a tool's call is), so what it sets stays its own.
        result = await asyncio.ensure_future(self.pipeline.run(request))
        if result.paused is not None:  # the program waits at this call for the caller's answer
            self.current = (index, name, arguments)  # the call that paused, not a later one
            raise result.paused
        self.tokens += result.original_tokens
        if result.is_error:
            message = result.error.message if result.error is not None else result.content
            raise ProgramToolError(_ERROR_TYPES.get(result.outcome, "RuntimeError"), message)
        return result.value

    def _request(self, name: str, arguments: Any, context: CallContext) -> CallRequest:
        """The request of a program's call of ``name``: any tool the session may see, listed
        or not, that a program may call (it searches with ``search_tools``)."""
        session = self.calls.session
        try:
            tool = session.resolve(name)
            check_caller(tool, session.manager.planner.caller_choice(tool), True)
        except ToolCallError as refused:
            return CallRequest(name, arguments, context, self.view, refusal=refused)
        hint = f" search_tools({tool.name!r}) gives its parameters."
        return CallRequest(name, arguments, context, self.view, tool, hint=hint.__str__)

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


def _too_large(waits_for: str) -> ProgramStateError:
    """A program paused at a call whose state is too large to keep: it cannot wait for
    ``waits_for``, and ends there (nothing after its earlier calls ran)."""
    return ProgramStateError(
        f"The program cannot wait for {waits_for}: its state is too large to keep. Nothing "
        "after the earlier calls ran; hold less in the program's variables before that call.",
        tool_name="run_code",
    )


class ProgramRun:
    """One ``run_code`` call's run of ``code``: fresh, or resumed from ``state`` (opened and
    recorded as resumed by the caller). See the module docstring.

    Args:
        calls: the session's code calls.
        pipeline: the pipeline the program's calls go to.
        view: what the program's calls are judged and measured against.
        code: the program; ``digest`` its digest.
        conversation: the conversation the run is bound to (None: this session only).
        context: the ``run_code`` call's context.
        state: the run to resume, or None for a fresh one.
        keep: where an integration without state of its own has the sealed state kept (a coroutine
            taking it), or None.
    """

    def __init__(
        self,
        calls: Any,
        pipeline: CallPipeline,
        view: CallView,
        code: str,
        digest: str,
        conversation: str | None,
        context: CallContext,
        state: RunState | None,
        keep: Any,
    ) -> None:
        self.calls = calls
        self.pipeline = pipeline
        self.view = view
        self.session = calls.session
        self.book = self.session.manager.runs
        self.code = code
        self.digest = digest
        self.conversation = conversation
        self.context = context
        self.state = state
        self.keep = keep
        self.run_id = state.run_id if state is not None else new_run_id()
        # Who answers: the manager's callback, else the framework's approver; asked from here,
        # so the answer is bound to one call of this run and a pause keeps the run's state.
        self.outer = who_approves(view.policy, context.approver)
        self.answered = state.program.approvals if state is not None else 0
        """The framework's answers in this ``run_code`` call (LangGraph answers by order)."""
        self.host: _Host | None = None

    async def go(self) -> ProgramOutcome:
        """Run the program to its end (or until a pause passes on).

        Raises:
            ProgramStateError: the program cannot be kept at a call that needs approval.
        """
        state = self.state
        replay = getattr(self.outer, "replay", None)
        if replay is not None and self.answered:
            replay(self.answered)  # the framework answers by order: its earlier answers first
        program = state.program if state is not None else None
        pending = state.pending if state is not None else None
        prepared: _Prepared | None = None
        if state is not None and pending is not None and pending.reason is not None:
            prepared = await self._ask(state, resumed=True)
        # The framework's own marker (``interrupt_on``) holds for the program's calls as for a
        # call by name.
        base = self.context.replace(resume_state=None, from_program=True)
        while True:
            host = self.host = _Host(self.calls, self.pipeline, self.view, base, self.run_id)
            host.count = pending.index - 1 if pending is not None else 0
            approver = _ProgramApprover(host, prepared) if self.outer is not None else None
            host.context = base.replace(approver=approver)
            kept: list[PausedProgram] = []

            async def on_pause(paused: PausedProgram, kept: list[PausedProgram] = kept) -> None:
                kept.append(paused)

            try:
                return await run_program(
                    self.code,
                    host,
                    self.calls.limits,
                    paused=program,
                    on_pause=on_pause,
                    client=base.client or self.session.conversation,  # its share of the workers
                )
            except _AskOutside as ask:
                request = ask.request
                if not kept:
                    raise _too_large(f"approval of its call to {request.tool.name!r}") from None
                program = kept[-1]
                pending = PendingCall(
                    request.call_index or host.count,
                    request.tool.name,
                    dict(request.arguments),
                    request.reason,
                )
                prepared = await self._ask(self._state(program, pending))
            except BaseException as exc:
                if is_pause(exc) and not kept:
                    # Nothing could carry the program to the answer: the call ends here, as a
                    # resume without its state would start the program over.
                    _, name, _ = host.current or (host.count, "?", None)
                    raise _too_large(f"the answer to its call to {name!r}") from None
                if is_pause(exc):  # a pause at a call: its state goes along
                    index, name, arguments = host.current or (host.count, "?", None)
                    args = dict(arguments) if isinstance(arguments, Mapping) else {}
                    sealed = self._seal(self._state(kept[-1], PendingCall(index, name, args)))
                    await self._kept(exc, sealed)
                raise

    def _state(self, program: PausedProgram, pending: PendingCall) -> RunState:
        program.approvals = self.answered
        return RunState(
            self.run_id,
            self.conversation or "",
            self.context.principal,
            self.digest,
            program,
            pending,
        )

    def _seal(self, state: RunState) -> str:
        return self.book.seal.seal(state)  # type: ignore[no-any-return]

    async def _kept(self, pause: BaseException, sealed: str) -> None:
        """The sealed state handed to the integration with ``pause`` (and kept for it when it keeps
        no state of its own)."""
        if isinstance(pause, CallPaused):
            pause.resume_state = sealed
        if self.keep is not None:
            await self.keep(sealed)

    async def _ask(self, state: RunState, resumed: bool = False) -> _Prepared:
        """The framework's answer about the call ``state`` waits at, asked with the state
        sealed (used once: a pause passes on with it, an answer records it used). A ``resumed``
        state keeps its nonce and expiry: asked again, it is the same once-used state, so a
        replay of a used one is never sealed anew."""
        pending = state.pending
        assert pending is not None and pending.reason is not None
        sealed = self.book.seal.seal(state, renew=not resumed)
        session = self.session
        tool = session.manager.catalog.find(pending.tool)
        if tool is None or not session.can_see(tool):
            # Hidden meanwhile: the call is refused by the pipeline when the program resumes.
            return _Prepared(pending, False, None)
        request = ApprovalRequest(
            session.present(tool),
            dict(pending.arguments),
            pending.reason,
            run_id=self.run_id,
            call_index=pending.index,
            resume_state=sealed,
        )
        error: BaseException | None = None
        verdict: Any = None
        try:
            verdict = self.outer(request)  # type: ignore[misc]
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except BaseException as exc:
            if is_pause(exc):  # the framework pauses: the integration keeps the state
                await self._kept(exc, sealed)
                raise
            if is_control_flow(exc):
                raise
            if not isinstance(exc, Exception):
                raise
            error = exc  # a no, or a failing approver: the call's own pipeline says which
        self.answered += 1
        await self.book.claim(state)
        return _Prepared(pending, verdict, error)
