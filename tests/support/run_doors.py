"""The framework adapters as rows of the run matrix (tests/security/test_run_matrix.py): each
drives its framework for real (LangChain's ``create_agent`` over an ``InMemorySaver``,
PydanticAI's ``Agent`` with the default ``message_history``, LiteLLM's runner over a mocked
completion) over the matrix's ops tools, which count their runs.

A driver is given the matrix's ``Ops`` (the tools) and ``Step`` (where a run stands); "another
worker" is a new agent and manager over the same framework state, sealing with the same key.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

__all__ = ["LangChainRunPath", "LiteLLMRunPath", "PydanticAIRunPath"]

YES, NO, SWAP = "yes", "no", "swap"
MARKED = "print(await export_all())"
"""A program whose one call only the framework's own approval marker asks about."""
NO_CALLER = (
    "n/a: the framework names no caller; whoever holds its state (thread, history) owns the run"
)
NO_UPSTREAM = "n/a: no upstream asks questions here"
_IN_PLACE = "n/a: `approve=` answers in place; a program never waits across calls"


def _manager(ops: Any, key: str, catalog: Any = None) -> Any:
    from toolmgmt_core import Execution, ToolManager

    catalog = ops.catalog() if catalog is None else catalog
    return ToolManager(catalog, mode="code", execution=Execution(run_key=key))


def _asked(tool: str, arguments: Any) -> str:
    return f"{tool} {json.dumps(arguments)}"


def _tampered(sealed: str) -> str:
    return sealed[:-4] + ("0000" if not sealed.endswith("0000") else "1111")


class _DoorPath(ABC):
    """What every adapter row shares: the ops tools, the matrix's ``Step``, the workers' key;
    each row starts a program its own way."""

    def __init__(self, ops: Any, step: type, key: str) -> None:
        self.ops, self.step, self.key = ops, step, key

    @abstractmethod
    async def start(self, code: str, caller: str = "ada", *, marked: bool = False) -> Any:
        """Run ``code`` through the framework as a model's ``run_code`` call: the step it ends
        at (a pause, or the answer)."""

    async def start_marked(self) -> Any:
        return await self.start(MARKED, marked=True)

    async def set_balance(self, amount: int) -> None:
        self.ops.balance = amount

    async def runs(self) -> dict[str, list[Any]]:
        return self.ops.calls  # type: ignore[no-any-return]


class LangChainRunPath(_DoorPath):
    """``create_agent`` with ``ToolManagerMiddleware``: a run per thread over one checkpointer;
    the state lives in the interrupt's value."""

    only = {"cross_caller": NO_CALLER, "carried_approval": NO_UPSTREAM}
    reviewed = " (HITL's review of `run_code` approves none of its calls)"

    def __init__(self, ops: Any, step: type, key: str) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        super().__init__(ops, step, key)
        self.saver = InMemorySaver()
        self.threads: dict[str, tuple[Any, bool]] = {}
        """Each thread's model (its turns go on across workers) and whether HITL marks."""

    def _agent(self, thread: str) -> Any:
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from toolmgmt_langchain import ToolManagerMiddleware

        model, marked = self.threads[thread]
        manager = _manager(self.ops, self.key)
        if not marked:
            middleware = [ToolManagerMiddleware(manager)]
        else:  # HITL reviews the program's text too: no approval of the calls it makes
            hitl = HumanInTheLoopMiddleware(interrupt_on={"export_all": True, "run_code": True})
            middleware = [hitl, ToolManagerMiddleware(manager, approval=hitl)]
        return create_agent(model, middleware=middleware, checkpointer=self.saver)

    async def _invoke(self, thread: str, given: Any, at: Any = None) -> Any:
        """Run the thread's agent from its latest checkpoint, or from ``at`` (time travel)."""
        from langchain_core.messages import ToolMessage
        from langgraph.types import Command

        config = {"configurable": {"thread_id": thread}}
        state = await self._agent(thread).ainvoke(given, at or config)
        while state.get("__interrupt__") and "action_requests" in state["__interrupt__"][0].value:
            approve = Command(resume={"decisions": [{"type": "approve"}]})  # HITL's, of run_code
            state = await self._agent(thread).ainvoke(approve, config)
        if state.get("__interrupt__"):
            value = state["__interrupt__"][0].value
            saved = self.saver.get_tuple(config)
            assert saved is not None  # the checkpoint it paused at, to resume from
            pause = (thread, saved.config)
            return self.step(pause=pause, asked=_asked(value["name"], value["args"]))
        answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return self.step(text=str(answers[-1].content) if answers else "")

    async def start(self, code: str, caller: str = "ada", *, marked: bool = False) -> Any:
        from langchain_core.messages import AIMessage, HumanMessage

        from toolmgmt_demo.models.langchain import ScriptedChatModel

        thread = f"t{len(self.threads) + 1}"
        call = {"name": "run_code", "args": {"code": code}, "id": "c1"}

        def turn(messages: list[Any], tools: list[Any]) -> Any:  # done once the call answered
            done = any(getattr(m, "tool_call_id", None) == "c1" for m in messages)
            return AIMessage(content="done") if done else AIMessage(content="", tool_calls=[call])

        self.threads[thread] = (ScriptedChatModel(script=turn), marked)
        return await self._invoke(thread, {"messages": [HumanMessage("go")]})

    async def resume(
        self,
        step: Any,
        answer: str,
        *,
        caller: str = "ada",
        other: bool = False,
        tamper: bool = False,
    ) -> Any:
        from langgraph.types import Command
        from pydantic import ValidationError

        thread, at = step.pause
        if tamper:
            self._change(thread, _tampered)
        decision: Any = {"type": "approve"} if answer == YES else {"type": "reject"}
        if answer == SWAP:
            action = {"name": "export_all", "args": {}}
            decision = {"type": "edit", "edited_action": action}
        try:  # each resume is a new agent and manager: any worker resumes from the checkpoint
            return await self._invoke(thread, Command(resume=decision), at)
        except ValidationError as exc:
            return self.step(text=f"ValidationError: {exc}")

    def _change(self, thread: str, change: Callable[[str], str]) -> None:
        """Rewrite the state kept in the checkpoint, as whoever holds its storage could."""
        from langgraph.types import Interrupt

        saved = self.saver.get_tuple({"configurable": {"thread_id": thread}})
        assert saved is not None
        for task, channel, interrupts in saved.pending_writes or []:
            if channel == "__interrupt__":
                changed = []
                for interrupt in interrupts:
                    value = dict(interrupt.value)
                    value["toolmgmt"] = {"resume_state": change(value["toolmgmt"]["resume_state"])}
                    changed.append(Interrupt(value=value, id=interrupt.id))
                self.saver.put_writes(saved.config, [(channel, changed)], task)


class PydanticAIRunPath(_DoorPath):
    """An ``Agent`` with a ``ManagedToolset`` and the default ``message_history`` (no
    ``conversation=``), stored as JSON between runs; the state lives in the history."""

    only = {"cross_caller": NO_CALLER, "carried_approval": NO_UPSTREAM}

    def _agent(self, code: str, marked: bool) -> Any:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.tools import DeferredToolRequests
        from pydantic_ai.toolsets import FunctionToolset
        from toolmgmt_pydantic_ai import ManagedToolset

        from toolmgmt_core import ToolCatalog

        def model(messages: Any, info: Any) -> Any:
            if len(messages) == 1:
                return ModelResponse(parts=[ToolCallPart("run_code", {"code": code}, "c1")])
            return ModelResponse(parts=[TextPart("done")])

        if not marked:
            managed = ManagedToolset(_manager(self.ops, self.key))
        else:  # export_all as PydanticAI's own tool, marked requires_approval
            toolset: FunctionToolset[Any] = FunctionToolset(id="ops")
            ops = self.ops

            @toolset.tool_plain(requires_approval=True)
            def export_all() -> str:
                """Export every record."""
                ops.calls.setdefault("export_all", []).append(None)
                return "exported"

            manager = _manager(self.ops, self.key, ToolCatalog())
            managed = ManagedToolset(manager, toolsets={"ops": toolset})
        output = [str, DeferredToolRequests]
        return Agent(FunctionModel(model), toolsets=[managed], output_type=output)

    def _step(self, run: Any, code: str, marked: bool) -> Any:
        from pydantic_ai.messages import ModelMessagesTypeAdapter
        from pydantic_ai.tools import DeferredToolRequests

        if isinstance(run.output, DeferredToolRequests):
            meta = run.output.metadata["c1"]
            stored = ModelMessagesTypeAdapter.dump_json(run.all_messages())
            history = ModelMessagesTypeAdapter.validate_json(stored)
            asked = _asked(meta["tool_name"], meta["arguments"])
            return self.step(pause=(code, marked, history), asked=asked)
        texts = [
            str(p.content)
            for m in run.all_messages()
            for p in getattr(m, "parts", ())
            if getattr(p, "tool_call_id", None) == "c1"
            and getattr(p, "part_kind", "") != "tool-call"
        ]
        return self.step(text=texts[-1] if texts else "")

    async def start(self, code: str, caller: str = "ada", *, marked: bool = False) -> Any:
        return self._step(await self._agent(code, marked).run("go"), code, marked)

    async def resume(
        self,
        step: Any,
        answer: str,
        *,
        caller: str = "ada",
        other: bool = False,
        tamper: bool = False,
    ) -> Any:
        from pydantic_ai.tools import DeferredToolResults, ToolApproved

        code, marked, history = step.pause
        if tamper:
            for message in history:
                kept = (getattr(message, "metadata", None) or {}).get("toolmgmt") or {}
                for run in (kept.get("runs") or {}).values():
                    run["resume_state"] = _tampered(run["resume_state"])
        verdict: Any = answer == YES
        if answer == SWAP:  # run_code's own override_args: another program in its place
            verdict = ToolApproved(override_args={"code": "print(await export_all())"})
        results = DeferredToolResults(approvals={"c1": verdict})
        # Each resume is a new agent, toolset and manager: any worker resumes from the history.
        run = await self._agent(code, marked).run(
            message_history=history, deferred_tool_results=results
        )
        return self._step(run, code, marked)


class LiteLLMRunPath(_DoorPath):
    """The LiteLLM runner over a mocked completion calling ``run_code``: the app's ``approve=``
    answers a program's call in place, so a run never waits across calls. ``start`` makes the
    model's response; ``resume`` runs its call with the app's answer."""

    only = {
        guard: _IN_PLACE
        for guard in (
            "stale_resume",
            "cross_caller",
            "rerun_across_workers",
            "eviction",
            "forged_state",
            "replayed",
        )
    } | {"carried_approval": NO_UPSTREAM, "marker": "n/a: LiteLLM has no approval marker"}

    async def start(self, code: str, caller: str = "ada", *, marked: bool = False) -> Any:
        import litellm

        call = {"name": "run_code", "arguments": json.dumps({"code": code})}
        response = await litellm.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "go"}],
            mock_tool_calls=[{"id": "c1", "type": "function", "function": call}],
        )
        return self.step(pause=response)

    async def resume(self, step: Any, answer: str, **_: Any) -> Any:
        from toolmgmt_litellm import run_meta_tool_calls

        from toolmgmt_core import ApprovalEdit

        def approve(request: Any) -> Any:
            if answer == SWAP:
                return ApprovalEdit(dict(request.arguments), tool_name="export_all")
            return answer == YES

        session = _manager(self.ops, self.key).session()
        [message] = await run_meta_tool_calls(session, step.pause, approve=approve)
        return self.step(text=str(message["content"]))
