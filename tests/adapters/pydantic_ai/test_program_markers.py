"""PydanticAI's ``requires_approval`` holds for a call made from a program as for the call by
name (issue 40, item 4): the program's call defers its ``run_code`` call, naming the tool."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("pydantic_monty")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import Execution, ToolCatalog, ToolManager  # noqa: E402


def test_requires_approval_pauses_a_programs_call() -> None:
    runs: Counter[str] = Counter()
    toolset: FunctionToolset[Any] = FunctionToolset(id="sms")

    @toolset.tool_plain(requires_approval=True)
    def send_sms(to: str) -> str:
        """Send a text message."""
        runs["send_sms"] += 1
        return f"sent to {to}"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            code = "print(await send_sms(to='+100'))"
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": code}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    managed = ManagedToolset(ToolManager(ToolCatalog(), mode="code"), toolsets={"sms": toolset})
    agent = Agent(FunctionModel(model), toolsets=[managed], output_type=[str, DeferredToolRequests])
    paused = agent.run_sync("text +100")
    assert isinstance(paused.output, DeferredToolRequests) and runs == Counter()
    assert paused.output.metadata["c1"]["tool_name"] == "send_sms"
    assert "requires_approval" in paused.output.metadata["c1"]["reason"]
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    assert resumed.output == "done" and runs == Counter({"send_sms": 1})


def test_approval_required_pauses_a_programs_call_naming_it() -> None:
    # A toolset's approval_required predicate raised inside the program's call: the deferred
    # request named nothing and its approval was refused as a lost program (never ran).
    runs: Counter[str] = Counter()
    toolset: FunctionToolset[Any] = FunctionToolset(id="ops")

    @toolset.tool_plain
    def ping() -> str:
        """Check the service answers."""
        runs["ping"] += 1
        return "pong"

    @toolset.tool_plain
    def wipe(target: str) -> str:
        """Wipe a target."""
        runs["wipe"] += 1
        return f"wiped {target}"

    code = "await ping()\nprint(await wipe(target='prod'))"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": code}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    def agent() -> Agent[Any, Any]:  # a fresh one per request
        marked = toolset.approval_required(lambda ctx, tool, args: args.get("target") == "prod")
        manager = ToolManager(ToolCatalog(), mode="code", execution=Execution(run_key="k"))
        managed = ManagedToolset(manager, toolsets={"ops": marked})
        return Agent(
            FunctionModel(model), toolsets=[managed], output_type=[str, DeferredToolRequests]
        )

    paused = agent().run_sync("wipe prod")
    assert isinstance(paused.output, DeferredToolRequests) and runs == Counter({"ping": 1})
    assert paused.output.metadata["c1"]["tool_name"] == "wipe"
    assert paused.output.metadata["c1"]["arguments"] == {"target": "prod"}
    resumed = agent().run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    assert resumed.output == "done" and runs == Counter({"ping": 1, "wipe": 1})
