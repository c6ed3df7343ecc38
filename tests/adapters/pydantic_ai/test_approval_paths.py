"""PydanticAI's own approval marker on every path, and an approval that runs its call once.

Regression tests for issue 32's findings 1 and 2: a wrapped tool with ``requires_approval=True``
reached through ``call_tool`` (the default cache-stable search path) ran unapproved, and an
approval edited on that path failed whatever the shape of ``override_args``.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import (  # noqa: E402
    DeferredToolRequests,
    DeferredToolResults,
    ToolApproved,
)
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402

OUTPUT = [str, DeferredToolRequests]


class Db:
    """A wrapped toolset whose ``drop_table`` needs PydanticAI's approval."""

    def __init__(self) -> None:
        self.dropped: list[str] = []
        self.toolset: FunctionToolset[Any] = FunctionToolset(id="db")

        @self.toolset.tool_plain(requires_approval=True)
        def drop_table(table: str) -> str:
            """Drop a database table and every row in it."""
            self.dropped.append(table)
            return f"dropped {table}"


def _script(*steps: list[ToolCallPart] | str) -> Any:
    seen: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(1)
        step = steps[min(len(seen), len(steps)) - 1]
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))

    return model


def _agent(db: Db) -> Agent[Any, Any]:
    """The default search path: ``tool_search`` then ``call_tool(drop_table, ...)``."""
    managed = ManagedToolset(ToolManager(ToolCatalog()), toolsets={"db": db.toolset})
    model = _script(
        [ToolCallPart("tool_search", {"query": "drop a table"}, tool_call_id="s1")],
        [
            ToolCallPart(
                "call_tool",
                {"tool_name": "drop_table", "arguments": {"table": "t1"}},
                tool_call_id="c1",
            )
        ],
        "done",
    )
    return Agent(FunctionModel(model), toolsets=[managed], output_type=OUTPUT)


def test_call_tool_of_a_wrapped_tool_that_requires_approval_pauses_and_names_the_inner_call() -> (
    None
):
    db = Db()
    agent = _agent(db)
    paused = agent.run_sync("drop t1")
    assert isinstance(paused.output, DeferredToolRequests), paused.output
    assert db.dropped == []
    [request] = paused.output.approvals
    assert request.tool_name == "call_tool"
    # What an approval screen reads: the tool that would run, its arguments, and why.
    meta = paused.output.metadata[request.tool_call_id]
    assert meta["tool_name"] == "drop_table"
    assert meta["arguments"] == {"table": "t1"}
    assert "requires_approval" in meta["reason"]
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    assert resumed.output == "done" and db.dropped == ["t1"]


def test_a_denied_call_tool_approval_never_runs_the_tool() -> None:
    db = Db()
    agent = _agent(db)
    paused = agent.run_sync("drop t1")
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": False}),
    )
    assert resumed.output == "done" and db.dropped == []


@pytest.mark.parametrize(
    "override",
    [{"table": "t9"}, {"tool_name": "drop_table", "arguments": {"table": "t9"}}],
    ids=["inner-arguments", "call-tool-shape"],
)
def test_an_edited_call_tool_approval_runs_the_inner_tool_with_the_edit(
    override: dict[str, Any],
) -> None:
    db = Db()
    agent = _agent(db)
    paused = agent.run_sync("drop t1")
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={"c1": ToolApproved(override_args=override)}
        ),
    )
    assert resumed.output == "done"
    assert db.dropped == ["t9"]


def test_an_edit_cannot_swap_the_approved_tool() -> None:
    db = Db()
    swapped: list[str] = []

    @db.toolset.tool_plain(requires_approval=True)
    def drop_database(name: str) -> str:
        """Drop a whole database."""
        swapped.append(name)
        return f"dropped {name}"

    agent = _agent(db)
    paused = agent.run_sync("drop t1")
    override = {"tool_name": "drop_database", "arguments": {"name": "prod"}}
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={"c1": ToolApproved(override_args=override)}
        ),
    )
    assert resumed.output == "done" and db.dropped == [] and swapped == []


def test_a_resumed_approval_replayed_runs_nothing() -> None:
    db = Db()
    agent = _agent(db)
    paused = agent.run_sync("drop t1")
    approvals = DeferredToolResults(approvals={"c1": True})
    agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=approvals)
    again = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=approvals)
    assert db.dropped == ["t1"]
    assert again.output == "done"
    returns = [
        p.content
        for m in again.all_messages()
        for p in getattr(m, "parts", ())
        if getattr(p, "tool_call_id", None) == "c1" and hasattr(p, "content")
    ]
    assert any("already used" in str(c) for c in returns), returns


def test_an_approval_replayed_through_a_fresh_agent_runs_nothing() -> None:
    # A fresh agent and toolset per request (same process): the same history and approval
    # replayed ran drop_table a second time (the used approvals lived in the toolset).
    db = Db()
    call = ToolCallPart("call_tool", {"tool_name": "drop_table", "arguments": {"table": "t1"}})

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("done")])

    def agent() -> Agent[Any, Any]:
        managed = ManagedToolset(ToolManager(ToolCatalog()), toolsets={"db": db.toolset})
        return Agent(FunctionModel(model), toolsets=[managed], output_type=OUTPUT)

    paused = agent().run_sync("drop t1")
    approvals = DeferredToolResults(approvals={call.tool_call_id: True})
    history = paused.all_messages()
    agent().run_sync(message_history=history, deferred_tool_results=approvals)
    again = agent().run_sync(message_history=history, deferred_tool_results=approvals)
    assert db.dropped == ["t1"]
    returns = [
        p.content
        for m in again.all_messages()
        for p in getattr(m, "parts", ())
        if getattr(p, "tool_call_id", None) == call.tool_call_id and hasattr(p, "content")
    ]
    assert any("already used" in str(c) for c in returns), returns
    # Another conversation whose model reuses the call id is its own call, approved once.
    other = agent().run_sync("drop t1")
    agent().run_sync(message_history=other.all_messages(), deferred_tool_results=approvals)
    assert db.dropped == ["t1", "t1"]
