"""A paused program's state lives in PydanticAI's message history (issue 40, item 2): resumed
with the default ``message_history`` (no ``conversation=``) by a fresh agent, toolset and
manager, the program carries on from its paused call and the SMS sent before the pause is sent
once, not twice. A changed, missing or replayed state runs nothing."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("pydantic_monty")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults  # noqa: E402
from support.programs import PROGRAM, program_manager  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402


def _agent(runs: Counter[str]) -> Agent[Any, Any]:
    """A fresh agent, toolset and manager each time (another worker): only the key is shared."""

    manager = program_manager(runs)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    return Agent(
        FunctionModel(model),
        toolsets=[ManagedToolset(manager)],
        output_type=[str, DeferredToolRequests],
    )


def _paused(runs: Counter[str]) -> list[ModelMessage]:
    run = _agent(runs).run_sync("text +100, then delete k1")
    assert isinstance(run.output, DeferredToolRequests)
    assert run.output.metadata["c1"]["tool_name"] == "delete_record"
    assert runs == Counter({"send_sms": 1})
    # Stored and loaded as an app keeps a history between requests.
    return ModelMessagesTypeAdapter.validate_json(
        ModelMessagesTypeAdapter.dump_json(run.all_messages())
    )


def _resume(runs: Counter[str], history: list[ModelMessage], agent: Any = None) -> Any:
    return (agent or _agent(runs)).run_sync(
        message_history=history,
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )


def _result(run: Any) -> str:
    return " ".join(
        str(p.content)
        for m in run.all_messages()
        for p in getattr(m, "parts", ())
        if getattr(p, "tool_call_id", None) == "c1" and getattr(p, "part_kind", "") != "tool-call"
    )


def test_a_fresh_agent_resumes_the_program_without_resending_the_sms() -> None:
    runs: Counter[str] = Counter()
    history = _paused(runs)
    worker = _agent(runs)
    resumed = _resume(runs, history, worker)
    assert resumed.output == "done" and "deleted k1" in _result(resumed)
    assert runs == Counter({"send_sms": 1, "delete_record": 1})
    # The same approval brought back to that worker (to any, with a shared Redis session
    # store): nothing runs.
    again = _resume(runs, history, worker)
    assert runs == Counter({"send_sms": 1, "delete_record": 1}) and again.output == "done"


def _kept(history: list[ModelMessage]) -> dict[str, Any]:
    [response] = [m for m in history if isinstance(m, ModelResponse) and m.metadata]
    return response.metadata["toolmgmt"]["runs"]  # type: ignore[index,no-any-return]


def test_a_changed_state_runs_nothing() -> None:
    runs: Counter[str] = Counter()
    history = _paused(runs)
    kept = _kept(history)["c1"]
    kept["resume_state"] = kept["resume_state"][:-4] + "0000"
    resumed = _resume(runs, history)
    assert runs == Counter({"send_sms": 1})
    assert "could not be resumed" in _result(resumed)


def test_a_history_without_the_state_runs_nothing() -> None:
    runs: Counter[str] = Counter()
    history = _paused(runs)
    _kept(history).clear()
    resumed = _resume(runs, history)
    assert runs == Counter({"send_sms": 1})
    assert "not in the message history" in _result(resumed)


def test_run_code_deferred_by_pydantic_ai_itself_says_so_when_refused() -> None:
    # A run_code PydanticAI defers for approval (approval_required) carries no program state:
    # refused as a lost one, and the message named only a history changed in between.
    runs: Counter[str] = Counter()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    def agent() -> Agent[Any, Any]:
        toolset = ManagedToolset(program_manager(runs)).approval_required(
            lambda ctx, tool, args: tool.name == "run_code"
        )
        return Agent(
            FunctionModel(model), toolsets=[toolset], output_type=[str, DeferredToolRequests]
        )

    paused = agent().run_sync("go")
    assert isinstance(paused.output, DeferredToolRequests) and runs == Counter()
    run = agent().run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    [answer] = [
        str(p.content)
        for m in run.all_messages()
        for p in getattr(m, "parts", ())
        if getattr(p, "part_kind", "") == "tool-return"
    ]
    assert "program_state" in answer and "approval_required" in answer and runs == Counter()
