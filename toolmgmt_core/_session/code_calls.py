"""Code mode's meta-tools for one session: ``run_code`` and ``tool_search``'s signatures.

``run_code`` runs the model's program in the sandbox (:mod:`toolmgmt_core._calls.code`); each
call it makes is a request to the same call pipeline, under a view of its own
(:mod:`toolmgmt_core._session.program_runs`), so it is resolved, checked against the policy,
validated, approved, run and reported as any call is, except that its whole value goes to the
program rather than to the model: nothing is cut or recorded in the session's result account.
Only what the program hands back (its output and last value) reaches the model, cut to the
result budget like any result.

Each ``run_code`` call is a fresh run with an id of its own, unless the integration hands back the
sealed state of a run paused at a call (``CallContext.resume_state``; for an integration that keeps
no state, the state kept in the conversation under the call's id): that run, once its seal,
expiry, conversation, caller and code are checked, carries on from the paused call, and the
calls before it never run again (:mod:`toolmgmt_core._session.program_runs`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from typing import Any

import toolmgmt_core._session.meta_tools as meta
from toolmgmt_core._calls.budget import ResultBudget
from toolmgmt_core._calls.code import CodeLimits, code_names, python_signature
from toolmgmt_core._calls.code.runs import ProgramStateError, code_digest
from toolmgmt_core._calls.execution import ToolResult
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._calls.request import CallRequest
from toolmgmt_core._calls.results import meta_result
from toolmgmt_core._events import ProgramFinished, ProgramStarted
from toolmgmt_core._model.errors import InvalidArgumentsError, ToolCallError, ToolExecutionError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._runtime.control import is_pause
from toolmgmt_core._session.program_runs import ProgramRun, WholeValues
from toolmgmt_core._session.state import MAX_STATE_PROGRAMS

__all__ = ["CodeCalls", "code_digest"]

MAX_CODE_CHARS = 20_000
"""Longest program ``run_code`` takes."""


def _call_key(call_id: str) -> str:
    """Where a paused run of the call ``call_id`` is kept in its conversation."""
    return "call-" + hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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
        """``tool_search`` in code mode: the found tools as Python signatures (``found``, and
        ``often_used_with`` when the catalog has learned companions), or a ``note`` saying why
        there are none."""
        found = self.meta_calls.find(args)
        if isinstance(found, dict):
            return found  # nothing matched: the note says what to try
        catalog = self.session.manager.catalog
        names = code_names(catalog)
        tools = [self.session.present(catalog.get(h.name)) for h in found]
        # A tool only the model calls directly is no program's to call: not shown here.
        planner = self.session.manager.planner
        tools = [t for t in tools if planner.caller_choice(t) != "direct"]
        if not tools:
            return {"found": "", "note": "The tools found are called directly, not from code."}
        answer = {"found": "\n".join(python_signature(t, names.alias(t.name)) for t in tools)}
        companions = [
            tool
            for n in self.meta_calls.companions(found)
            if planner.caller_choice(tool := self.session.present(catalog.get(n))) != "direct"
        ]
        if companions:
            answer["often_used_with"] = "\n".join(
                python_signature(t, names.alias(t.name)) for t in companions
            )
        return answer

    def search(self, args: dict[str, Any]) -> ToolResult:
        """``tool_search``'s result in code mode: :meth:`search_answer` as the Python text it
        is (signatures, then companions and notes as comments), not JSON around it, whose
        escaped quotes and line breaks the model would pay for."""
        answer = self.search_answer(args)
        parts = [answer["found"]] if isinstance(answer.get("found"), str) else []
        if answer.get("often_used_with"):
            parts.append("# Often used with them:\n" + answer["often_used_with"])
        if answer.get("note"):
            parts.append("# " + answer["note"])
        text = "\n".join(p for p in parts if p)
        return meta_result(meta.TOOL_SEARCH, answer, self.session.manager.encoding, content=text)

    async def run_code(
        self, args: dict[str, Any], request: CallRequest, pipeline: CallPipeline
    ) -> ToolResult:
        """The ``run_code`` call ``request``: its program run (fresh or resumed), each call
        it makes a request to ``pipeline``, and what it hands back shaped as a result."""
        session, context, view = self.session, request.context, request.view
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
        call_id = context.call_id
        # An integration that keeps no state has a paused run kept here, by its call's id.
        kept_as = None if context.keeps_state or not call_id else _call_key(call_id)
        sealed = context.resume_state
        conversation = (
            None
            if session.session_id is None and session.conversation.startswith("local-")
            else session.conversation
        )
        state = None
        try:
            if sealed is None and kept_as is not None:
                sealed = session.kept_program(kept_as)
            if sealed is not None:
                state = session.manager.runs.seal.open(
                    sealed,
                    conversation=conversation or "",
                    principal=context.principal,
                    code=code_digest(code),
                )
                pending = state.pending
                if pending is None or pending.reason is None:
                    # Waiting at an approval, it is claimed once answered (ProgramRun): an
                    # answer the framework refused before saving it leaves the pause to answer.
                    await session.manager.runs.claim(state)
                if context.resume_state is None and kept_as is not None:
                    session.take_program(kept_as, session.manager.runs.seal.ttl)
            elif kept_as is not None and not session.room_for_program():
                raise ProgramStateError(
                    f"This conversation holds {MAX_STATE_PROGRAMS} programs paused or resumed "
                    "whose runs have not expired, so another cannot wait here for an approval. "
                    "Nothing ran. Start a new conversation, or keep paused programs in the "
                    "framework's own state (CallContext.keeps_state).",
                    tool_name=meta.RUN_CODE,
                )
        except ProgramStateError as exc:
            return pipeline.error_result(meta.RUN_CODE, exc, view)

        async def keep(sealed: str) -> None:
            await session.keep_program(kept_as, sealed, session.manager.runs.seal.ttl)

        budget = WholeValues(ResultBudget(encoding=session.manager.encoding))
        # The program's calls: judged as this call is, their whole values to the program.
        inner = dataclasses.replace(view, budget=budget, meta=None)
        run = ProgramRun(
            self,
            pipeline,
            inner,
            code,
            code_digest(code),
            conversation,
            context,
            state,
            keep if kept_as is not None else None,
        )
        events = session.manager.events
        started = ProgramStarted(session.conversation, call_id, state is not None)
        clock = time.monotonic()
        if events:
            events.emit(started)
        try:
            outcome = await run.go()
        except ProgramStateError as exc:
            outcome = None
            refused = pipeline.error_result(meta.RUN_CODE, exc, view)
        except BaseException as exc:
            if events:
                events.emit(
                    ProgramFinished(
                        session.conversation,
                        started,
                        "paused" if is_pause(exc) else "interrupted",
                        run.host.count if run.host else 0,
                        run.host.tokens if run.host else 0,
                        0,
                        time.monotonic() - clock,
                        type(exc).__name__,
                    )
                )
            raise
        host = run.host
        if outcome is None:
            result = refused
        elif outcome.error is None:
            result = await pipeline.shape(self._tool(), outcome.text, None, request)
        else:
            error: ToolCallError = (
                InvalidArgumentsError(outcome.text, tool_name=meta.RUN_CODE)
                if outcome.error == "syntax"
                else ToolExecutionError(
                    f"The program stopped: {outcome.text}",
                    tool_name=meta.RUN_CODE,
                )
            )
            result = pipeline.error_result(meta.RUN_CODE, error, view)
        if events:
            events.emit(
                ProgramFinished(
                    session.conversation,
                    started,
                    result.outcome,
                    host.count if host else 0,
                    host.tokens if host else 0,
                    result.tokens,
                    time.monotonic() - clock,
                    None,
                )
            )
        return result

    def _tool(self) -> Tool:
        tool = self.session.meta_tool(meta.RUN_CODE)
        return tool if tool is not None else meta.run_code_tool()
