"""A program with two calls that need approval, through LangGraph's ``interrupt()`` and
PydanticAI's deferred tools: each pause names its call, each resume carries on from the
program's snapshot, and every tool runs exactly once (the answers never cross calls)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import Access, Execution, Policy, ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._stores.base import InMemorySessionStore  # noqa: E402

PROGRAM = (
    "a = await lookup('a')\n"
    "x = await delete_record(key=a)\n"
    "b = await lookup('b')\n"
    "y = await delete_record(key=b)\n"
    "print(x, y)"
)


class Tools:
    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.deleted: list[str] = []

    def catalog(self) -> ToolCatalog:
        def lookup(key: str) -> str:
            """Look a key up."""
            self.runs["lookup"] += 1
            return key.upper()

        def delete_record(key: str) -> str:
            """Delete one record."""
            self.runs["delete_record"] += 1
            self.deleted.append(key)
            return f"deleted {key}"

        catalog = ToolCatalog()
        catalog.add_function(lookup)
        catalog.add_function(delete_record)
        return catalog


def _manager(tools: Tools, **options: Any) -> ToolManager:
    access = Access(policies=[Policy("global", require_approval=["delete_*"])])
    # Workers share the key sealing paused programs (a random one per manager otherwise).
    options.setdefault("execution", Execution(run_key="the workers' key"))
    return ToolManager(tools.catalog(), mode="code", access=access, **options)


def test_langgraph_interrupts_once_per_call_and_resumes_the_program() -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command
    from toolmgmt_langchain import ToolManagerMiddleware

    from toolmgmt_demo.models.langchain import ScriptedChatModel

    tools = Tools()
    call = {"name": "run_code", "args": {"code": PROGRAM}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
    )
    agent = create_agent(
        model,
        middleware=[ToolManagerMiddleware(_manager(tools))],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("go")]}, config)
    [first] = state["__interrupt__"]
    assert (first.value["name"], first.value["args"]) == ("delete_record", {"key": "A"})
    state = agent.invoke(Command(resume={"type": "approve"}), config)
    [second] = state["__interrupt__"]
    assert (second.value["name"], second.value["args"]) == ("delete_record", {"key": "B"})
    assert tools.runs == Counter({"lookup": 2, "delete_record": 1})
    edit = {"type": "edit", "edited_action": {"name": "delete_record", "args": {"key": "Z"}}}
    state = agent.invoke(Command(resume=edit), config)
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answer.content == "deleted A deleted Z"
    assert tools.runs == Counter({"lookup": 2, "delete_record": 2})
    assert tools.deleted == ["A", "Z"]


def test_pydantic_ai_defers_each_call_and_one_approval_answers_one() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
    from toolmgmt_pydantic_ai import ManagedToolset

    tools = Tools()
    store = InMemorySessionStore()

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    def agent() -> Agent[Any, Any]:
        # A fresh manager and toolset each run: the program's snapshot is in the store.
        managed = ManagedToolset(
            _manager(tools, session_store=store), conversation=lambda ctx: "conversation-1"
        )
        return Agent(
            FunctionModel(model), toolsets=[managed], output_type=[str, DeferredToolRequests]
        )

    run = agent().run_sync("go")
    assert isinstance(run.output, DeferredToolRequests)
    assert run.output.metadata["c1"]["arguments"] == {"key": "A"}
    run = agent().run_sync(
        message_history=run.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    # The approval answered the first call only: the second pauses the run again.
    assert isinstance(run.output, DeferredToolRequests)
    assert run.output.metadata["c1"]["arguments"] == {"key": "B"}
    assert tools.runs == Counter({"lookup": 2, "delete_record": 1})
    run = agent().run_sync(
        message_history=run.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": ToolDenied("no")}),
    )
    # PydanticAI answers a denied call itself: the program is not resumed, B is never deleted.
    returns = [
        p
        for m in run.all_messages()
        for p in getattr(m, "parts", [])
        if isinstance(p, ToolReturnPart)
    ]
    assert tools.deleted == ["A"] and returns
