"""A paused program's state lives in the LangGraph checkpoint (issue 40, item 2): a fresh agent
(a new middleware and manager, as another worker builds) over the same checkpointer resumes the
program from its paused call, and the SMS sent before the pause is sent once, not twice."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("pydantic_monty")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from support.programs import program_manager  # noqa: E402
from toolmgmt_langchain import ToolManagerMiddleware  # noqa: E402

from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402

PROGRAM = (
    "await send_sms(to='+100')\n"
    "x = await delete_record(key='k1')\n"
    "y = await delete_record(key='k2')\n"
    "print(x, y)"
)
ONE_DELETE = "await send_sms(to='+100')\nprint(await delete_record(key='k1'))"
CONFIG = {"configurable": {"thread_id": "t"}}


def _model() -> ScriptedChatModel:
    """The model's turns (one script across the agents: its turns go on where they were)."""
    call = {"name": "run_code", "args": {"code": PROGRAM}, "id": "c1"}
    return ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
    )


def _agent(runs: Counter[str], saver: InMemorySaver, model: ScriptedChatModel) -> Any:
    manager = program_manager(runs)
    return create_agent(model, middleware=[ToolManagerMiddleware(manager)], checkpointer=saver)


def test_a_fresh_agent_over_the_checkpointer_resumes_without_resending_the_sms() -> None:
    runs: Counter[str] = Counter()
    saver, model = InMemorySaver(), _model()
    state = _agent(runs, saver, model).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    [first] = state["__interrupt__"]
    assert first.value["args"] == {"key": "k1"} and runs == Counter({"send_sms": 1})
    state = _agent(runs, saver, model).invoke(Command(resume={"type": "approve"}), CONFIG)
    [second] = state["__interrupt__"]
    assert second.value["args"] == {"key": "k2"}
    assert runs == Counter({"send_sms": 1, "delete_record": 1})
    state = _agent(runs, saver, model).invoke(Command(resume={"type": "approve"}), CONFIG)
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answer.content == "deleted k1 deleted k2"
    assert runs == Counter({"send_sms": 1, "delete_record": 2})


def test_a_resume_whose_interrupt_kept_no_state_runs_nothing() -> None:
    from langgraph.types import Interrupt

    runs: Counter[str] = Counter()
    saver, model = InMemorySaver(), _model()
    _agent(runs, saver, model).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    saved = saver.get_tuple(CONFIG)
    assert saved is not None
    for task, channel, interrupts in saved.pending_writes or []:
        if channel == "__interrupt__":  # whoever holds the checkpoint drops the state
            dropped = [
                Interrupt(value={k: v for k, v in i.value.items() if k != "toolmgmt"}, id=i.id)
                for i in interrupts
            ]
            saver.put_writes(saved.config, [(channel, dropped)], task)
    state = _agent(runs, saver, model).invoke(Command(resume={"type": "approve"}), CONFIG)
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert "program_state" in str(answer.content) and "not in the checkpoint" in str(answer.content)
    assert runs == Counter({"send_sms": 1})


def test_resuming_the_paused_checkpoint_again_runs_nothing_twice() -> None:
    # LangGraph's time travel: once the run is done, its paused checkpoint resumed again (by a
    # fresh agent and manager in the same process) ran the approved delete a second time.
    runs: Counter[str] = Counter()
    saver = InMemorySaver()
    call = {"name": "run_code", "args": {"code": ONE_DELETE}, "id": "c1"}

    def turn(messages: list[Any], tools: list[Any]) -> AIMessage:
        done = any(isinstance(m, ToolMessage) for m in messages)
        return AIMessage(content="done") if done else AIMessage(content="", tool_calls=[call])

    def agent() -> Any:
        return _agent(runs, saver, ScriptedChatModel(script=turn))

    agent().invoke({"messages": [HumanMessage("go")]}, CONFIG)
    paused = saver.get_tuple(CONFIG)
    assert paused is not None
    approve = Command(resume={"type": "approve"})
    agent().invoke(approve, CONFIG)
    assert runs == Counter({"send_sms": 1, "delete_record": 1})
    again = agent().invoke(approve, paused.config)
    assert runs == Counter({"send_sms": 1, "delete_record": 1})
    answer = [m for m in again["messages"] if isinstance(m, ToolMessage)][-1]
    assert "resumed already" in str(answer.content)
