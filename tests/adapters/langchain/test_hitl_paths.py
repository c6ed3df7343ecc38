"""HumanInTheLoopMiddleware's ``interrupt_on`` on every path to a tool (issue 32): a tool HITL
reviews by name needs the same approval reached through ``call_tool``, which HITL never sees."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from toolmgmt_langchain import ToolManagerMiddleware  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402


def _agent(sent: list[str], when: Any = None) -> Any:
    def send_email(to: str) -> str:
        """Send an email to a recipient."""
        sent.append(to)
        return f"sent to {to}"

    catalog = ToolCatalog()
    catalog.add_function(send_email, domain="mail")
    config: Any = True if when is None else {"allowed_decisions": ["approve"], "when": when}
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send_email": config})
    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "tool_search", "args": {"query": "email"}, "id": "s1"}],
            ),
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "call_tool",
                        "args": {"tool_name": "send_email", "arguments": {"to": "ceo@x.io"}},
                        "id": "c1",
                    }
                ],
            ),
            AIMessage(content="done"),
        ]
    )
    middleware = ToolManagerMiddleware(ToolManager(catalog, mode="search"), approval=hitl)
    return create_agent(model, middleware=[hitl, middleware], checkpointer=InMemorySaver())


def test_interrupt_on_holds_for_a_tool_reached_through_call_tool() -> None:
    sent: list[str] = []
    agent = _agent(sent)
    config = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("mail the ceo")]}, config)
    [pending] = paused["__interrupt__"]
    assert pending.value["name"] == "send_email" and pending.value["args"] == {"to": "ceo@x.io"}
    assert sent == []
    state = agent.invoke(Command(resume={pending.id: {"type": "reject"}}), config)
    assert sent == []
    result = next(m for m in state["messages"] if isinstance(m, ToolMessage) and m.id != "s1")
    assert state["messages"][-1].content == "done" and result is not None


def test_interrupt_on_when_is_asked_about_the_inner_call() -> None:
    sent: list[str] = []
    agent = _agent(sent, when=lambda request: request.tool_call["args"]["to"].endswith("@x.io"))
    config = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("mail the ceo")]}, config)
    assert paused.get("__interrupt__") and sent == []
    agent.invoke(Command(resume={paused["__interrupt__"][0].id: {"type": "approve"}}), config)
    assert sent == ["ceo@x.io"]
