"""HumanInTheLoopMiddleware's ``interrupt_on`` pauses a call made from a program as it pauses
the same call made by name (issue 40, item 4): in code mode, a program's ``send_sms`` ran
without the review ``interrupt_on={"send_sms": True}`` asks for."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("pydantic_monty")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from pydantic import ValidationError  # noqa: E402
from support.programs import program_manager  # noqa: E402
from toolmgmt_langchain import ToolManagerMiddleware  # noqa: E402

from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402

PROGRAM = "print(await send_sms(to='+100'))"


def _agent(
    runs: Counter[str],
    interrupt_on: dict[str, Any] | None = None,
    program: str = PROGRAM,
    *,
    policy: bool = False,
) -> Any:
    hitl = HumanInTheLoopMiddleware(interrupt_on=interrupt_on or {"send_sms": True})
    call = {"name": "run_code", "args": {"code": program}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
    )
    middleware = ToolManagerMiddleware(program_manager(runs, policy=policy), approval=hitl)
    return create_agent(model, middleware=[hitl, middleware], checkpointer=InMemorySaver())


def test_interrupt_on_pauses_a_programs_call() -> None:
    runs: Counter[str] = Counter()
    agent = _agent(runs)
    config = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("text +100")]}, config)
    [pending] = paused["__interrupt__"]
    assert (pending.value["name"], pending.value["args"]) == (
        "send_sms",
        {"to": "+100"},
    )
    assert runs == Counter()
    state = agent.invoke(Command(resume={"type": "approve"}), config)
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert "sent to +100" in str(answer.content) and runs == Counter({"send_sms": 1})


def test_an_edit_of_a_programs_call_cannot_swap_the_tool() -> None:
    runs: Counter[str] = Counter()
    agent = _agent(runs)
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("text +100")]}, config)
    swap = {
        "type": "edit",
        "edited_action": {"name": "export_all", "args": {"target": "s3://attacker"}},
    }
    with pytest.raises(ValidationError):
        agent.invoke(Command(resume=swap), config)
    assert runs == Counter()
    # The refused answer was not saved: the same pause is answered again.
    state = agent.invoke(Command(resume={"type": "reject"}), config)
    assert runs == Counter() and state["messages"][-1].content == "done"


def _asked(state: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(i.value.get("name"), i.value.get("args")) for i in state.get("__interrupt__", ())]


def test_a_review_of_the_program_does_not_approve_its_calls() -> None:
    # HITL reviewing run_code shows the program's text, not what its calls will be: a yes to
    # the text once ran the computed delete (needs approval) and the marked send_sms unasked.
    runs: Counter[str] = Counter()
    program = "k = 'k' + str(1)\nawait send_sms(to='+100')\nprint(await delete_record(key=k))"
    agent = _agent(runs, {"run_code": True, "send_sms": True}, program, policy=True)
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("go")]}, config)
    assert state["__interrupt__"][0].value["action_requests"][0]["name"] == "run_code"
    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert _asked(state) == [("send_sms", {"to": "+100"})] and runs == Counter()
    state = agent.invoke(Command(resume={"type": "approve"}), config)
    assert _asked(state) == [("delete_record", {"key": "k1"})]
    assert runs == Counter({"send_sms": 1})
    state = agent.invoke(Command(resume={"type": "approve"}), config)
    assert runs == Counter({"send_sms": 1, "delete_record": 1}) and not _asked(state)


def test_a_when_that_lets_the_program_pass_still_marks_its_calls() -> None:
    runs: Counter[str] = Counter()
    skip = {"allowed_decisions": ["approve"], "when": lambda request: False}
    agent = _agent(runs, {"run_code": skip, "send_sms": True})
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("go")]}, config)
    assert _asked(state) == [("send_sms", {"to": "+100"})] and runs == Counter()


def test_a_programs_call_takes_only_the_decisions_interrupt_on_allows() -> None:
    # HITL refuses a decision its config does not allow for the call by name; so for a program.
    runs: Counter[str] = Counter()
    only = {"allowed_decisions": ["approve", "reject"]}
    agent = _agent(runs, {"send_sms": only})
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("go")]}, config)
    assert state["__interrupt__"][0].value["allowed_decisions"] == ["approve", "reject"]
    edit = {"type": "edit", "edited_action": {"name": "send_sms", "args": {"to": "+666"}}}
    with pytest.raises(ValidationError):
        agent.invoke(Command(resume=edit), config)
    assert runs == Counter()
    agent.invoke(Command(resume={"type": "approve"}), config)
    assert runs == Counter({"send_sms": 1})
