"""Issue 42: a call flows down once, as one immutable request; the pipeline never asks the
session for more, and every call of a manager (a meta-tool's inner call and a program's calls
included) is a request to its one pipeline."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from toolmgmt_core import Search, ToolCatalog, ToolManager
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._calls.request import CallRequest


def _catalog() -> ToolCatalog:
    catalog = ToolCatalog()

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    catalog.add_function(add)
    return catalog


def _recording(manager: ToolManager) -> list[CallRequest]:
    seen: list[CallRequest] = []
    run = manager.pipeline.run

    async def recorded(request: CallRequest) -> Any:
        seen.append(request)
        return await run(request)

    manager.pipeline.run = recorded  # type: ignore[method-assign]
    return seen


def test_a_request_runs_without_its_session() -> None:
    """What the pipeline needs is in the request: run with the session gone, it still
    validates, runs and shapes the call."""
    manager = ToolManager(_catalog(), mode="flat")
    request = manager.session().request("add", {"a": 2, "b": 3}, CallContext(call_id="c1"))
    assert request.tool is not None and request.tool.name == "add" and not request.meta
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.arguments = {}  # type: ignore[misc]
    result = asyncio.run(manager.pipeline.run(request))
    assert result.content == "5" and not result.is_error
    refused = manager.session().request("nope", {}, CallContext())
    assert refused.tool is None and refused.refusal is not None
    assert asyncio.run(manager.pipeline.run(refused)).outcome == "retry"


def test_every_call_of_a_manager_goes_to_its_one_pipeline() -> None:
    """Two sessions, a call_tool's inner call and a program's calls: one pipeline, built once."""
    search = ToolManager(_catalog(), mode="search")
    first, second = search.session(), search.session()
    assert first.pipeline is second.pipeline is search.pipeline
    assert isinstance(search.pipeline, CallPipeline)
    seen = _recording(search)
    inner = {"tool_name": "add", "arguments": {"a": 1, "b": 1}}
    assert first.call_sync("call_tool", inner).content == "2"
    assert [(r.name, r.meta) for r in seen] == [("call_tool", True)]  # the inner one: a request

    code = ToolManager(_catalog(), mode="code")
    seen = _recording(code)
    program = "a = await add(a=1, b=2)\nb = await add(a=a, b=4)\nb"
    result = code.session().call_sync("run_code", {"code": program}, call_id="r1")
    assert "7" in result.content, result.content
    names = [(r.name, r.context.call_id, r.context.from_program) for r in seen]
    assert names == [("run_code", "r1", False), ("add", "r1.1", True), ("add", "r1.2", True)]
    budgets = {id(r.view.budget) for r in seen[1:]}
    assert len(budgets) == 1 and seen[0].view.budget not in [r.view.budget for r in seen[1:]]


def test_a_planned_list_names_its_tools_once() -> None:
    """Every call checks its name against the step's list: the plan's set of names is made
    once per plan (a flat list of 151 tools is not walked again per call), and a load that
    changes the list makes a new plan with its own names."""
    catalog = _catalog()
    catalog.add_function(lambda: "pong", name="ping", description="Answer pong.")
    session = ToolManager(catalog, mode=Search(appends=True)).session()
    listed = session.layout()
    assert session.layout().names is listed.names
    assert "ping" not in listed.names
    session.call_sync("tool_search", {"query": "ping pong"})
    assert "ping" in session.layout().names and "ping" not in listed.names
