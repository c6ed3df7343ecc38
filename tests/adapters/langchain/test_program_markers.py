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


def _agent(runs: Counter[str]) -> Any:
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send_sms": True})
    call = {"name": "run_code", "args": {"code": PROGRAM}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
    )
    middleware = ToolManagerMiddleware(program_manager(runs, policy=False), approval=hitl)
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
