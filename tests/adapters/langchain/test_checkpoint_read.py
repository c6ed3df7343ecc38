"""The one private access to LangGraph (toolmgmt_langchain.checkpoint): a node resumed from its
checkpoint reads the value of the interrupt it raised for a tool call. If LangGraph changes
where it keeps a task's interrupts, this test fails (and a paused program would start over)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.config import get_config  # noqa: E402
from langgraph.graph import StateGraph  # noqa: E402
from langgraph.types import Command, interrupt  # noqa: E402
from toolmgmt_langchain.checkpoint import apaused_value, paused_value  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402


class _State(TypedDict, total=False):
    seen: list[Any]


def _graph(seen: list[Any], *, run_async: bool) -> Any:
    def ask(n: int) -> None:
        interrupt({"tool_call_id": "c1", "toolmgmt": {"resume_state": f"S{n}"}})

    def node(state: _State) -> _State:
        seen.append(paused_value(get_config(), "c1"))
        ask(0)
        ask(1)
        return {}

    async def anode(state: _State) -> _State:
        seen.append(await apaused_value(get_config(), "c1"))
        ask(0)
        ask(1)
        return {}

    graph = StateGraph(_State)
    graph.add_node("tools", anode if run_async else node)
    graph.set_entry_point("tools")
    graph.set_finish_point("tools")
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_resumed_node_reads_its_own_last_interrupt(run_async: bool) -> None:
    seen: list[Any] = []
    graph = _graph(seen, run_async=run_async)
    config = {"configurable": {"thread_id": "t"}}

    def invoke(value: Any) -> Any:
        if run_async:
            return asyncio.run(graph.ainvoke(value, config))
        return graph.invoke(value, config)

    invoke({})
    invoke(Command(resume="yes"))
    invoke(Command(resume="yes"))
    assert seen == [
        None,
        {"resume_state": "S0"},
        {"resume_state": "S1"},
    ]
    assert paused_value(None, "c1") is None  # outside a graph run
