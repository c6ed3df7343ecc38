"""Wrapped PydanticAI tools through ``ManagedToolset``: what the framework itself would do.

Regression tests for the door's findings: a wrapped tool keeps every field of its own
definition (``requires_approval=True`` pauses the run), a fresh toolset restores its loads from
``message_history`` over wrapped tools, errors the model can fix are PydanticAI's own retries,
and ``always_on`` may name a wrapped tool.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import UnexpectedModelBehavior  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402
from support.pydantic_ai_messages import tool_returns  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    ConfigError,
    Search,  # noqa: E402
    ToolCatalog,
    ToolManager,
)

OUTPUT = [str, DeferredToolRequests]


class Script:
    """A FunctionModel body: one scripted step per model request; records the tools listed."""

    def __init__(self, *steps: list[ToolCallPart] | str) -> None:
        self.steps = list(steps)
        self.listed: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.listed.append([t.name for t in info.function_tools])
        step = self.steps[min(len(self.listed), len(self.steps)) - 1]
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))


def _call(name: str, args: dict[str, Any], call_id: str) -> list[ToolCallPart]:
    return [ToolCallPart(name, args, tool_call_id=call_id)]


class Crm:
    """A wrapped toolset: ``find_contact``, and ``delete_contact`` which needs approval."""

    def __init__(self) -> None:
        self.runs = {"find_contact": 0, "delete_contact": 0}
        self.toolset: FunctionToolset[Any] = FunctionToolset(id="crm")

        @self.toolset.tool_plain
        def find_contact(name: str) -> str:
            """Find a CRM contact by name."""
            self.runs["find_contact"] += 1
            return f"contact {name}: con_0001"

        @self.toolset.tool_plain(requires_approval=True, sequential=True)
        def delete_contact(contact_id: str) -> str:
            """Delete a CRM contact."""
            self.runs["delete_contact"] += 1
            return f"deleted {contact_id}"


def _managed(crm: Crm, **options: Any) -> ManagedToolset:
    options.setdefault("mode", Search(appends=True))
    return ManagedToolset(ToolManager(ToolCatalog(), **options), toolsets=[crm.toolset])


def test_a_wrapped_tool_that_requires_approval_still_pauses_the_run() -> None:
    """Finding 1: the adapter rebuilt each definition and dropped ``kind='unapproved'``, so the
    tool ran with nobody asked; without toolmgmt the same run ends in DeferredToolRequests."""
    crm = Crm()
    managed = _managed(crm, always_on=["delete_contact"])
    agent = Agent(
        FunctionModel(Script(_call("delete_contact", {"contact_id": "c1"}, "d1"), "done")),
        toolsets=[managed],
        output_type=OUTPUT,
    )
    paused = agent.run_sync("delete c1")
    assert isinstance(paused.output, DeferredToolRequests)
    assert [c.tool_call_id for c in paused.output.approvals] == ["d1"]
    assert crm.runs["delete_contact"] == 0
    resumed = agent.run_sync(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"d1": True}),
    )
    assert resumed.output == "done" and crm.runs["delete_contact"] == 1


def _definitions(toolset: Any) -> dict[str, Any]:
    """The tool definitions a model is sent when an agent runs with ``toolset``."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(model), toolsets=[toolset]).run_sync("hi")
    return {t.name: t for t in seen}


def test_every_field_of_a_wrapped_definition_the_adapter_does_not_own_is_kept() -> None:
    crm = Crm()
    without = _definitions(crm.toolset)  # what PydanticAI sends without toolmgmt
    listed = _definitions(_managed(crm, mode="flat"))
    # What toolmgmt may change: the description (a policy override), the deferral, its marks in
    # the metadata, and the toolset that serves the tool (the ManagedToolset: calls go
    # through it, and durable execution routes them by this id).
    owned = {"description", "defer_loading", "metadata", "toolset_id"}
    for name, tool in without.items():
        mine, theirs = dataclasses.asdict(listed[name]), dataclasses.asdict(tool)
        assert {k: v for k, v in mine.items() if k not in owned} == {
            k: v for k, v in theirs.items() if k not in owned
        }
        assert mine["metadata"]["toolmgmt"] is True
    assert listed["delete_contact"].kind == "unapproved"
    assert listed["delete_contact"].sequential is True


def test_a_fresh_toolset_restores_wrapped_tools_loaded_earlier_in_the_history() -> None:
    """Finding 2: loads were restored before the wrapped tools joined the catalog, so a fresh
    ManagedToolset (a restart, a serverless worker) listed only tool_search and the tool the
    conversation had found answered ``Unknown tool name``."""
    first = Script(
        _call("tool_search", {"query": "find a crm contact by name"}, "s1"),
        _call("find_contact", {"name": "Patel"}, "f1"),
        "found",
    )
    crm = Crm()
    done = Agent(FunctionModel(first), toolsets=[_managed(crm)]).run_sync("find Patel")
    assert crm.runs["find_contact"] == 1
    later = Script(_call("find_contact", {"name": "Ng"}, "f2"), "found again")
    fresh = Agent(FunctionModel(later), toolsets=[_managed(crm)])  # a new process: new catalog
    result = fresh.run_sync("and Ng?", message_history=done.all_messages())
    assert "find_contact" in later.listed[0]
    assert crm.runs["find_contact"] == 2
    assert tool_returns(result.all_messages())["f2"].outcome == "success"


def test_a_model_repeating_bad_arguments_meets_pydantic_ais_own_retry_limit() -> None:
    """Finding 3: toolmgmt's validation errors were successful tool returns, so the retry limit
    never applied (the run went on to the request limit); now they are ModelRetry."""
    crm = Crm()
    bad = _call("find_contact", {"nickname": "P"}, "f1")
    script = Script(bad, bad, bad, bad, bad, "never")
    agent = Agent(FunctionModel(script), toolsets=[_managed(crm, always_on=["find_contact"])])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        agent.run_sync("find P")
    assert crm.runs["find_contact"] == 0 and len(script.listed) == 2


def test_an_error_the_model_can_fix_is_a_retry_and_a_refusal_a_failure() -> None:
    crm = Crm()
    script = Script(
        _call("find_contact", {}, "f1"),
        _call("find_contact", {"name": "Patel"}, "f2"),
        "ok",
    )
    agent = Agent(FunctionModel(script), toolsets=[_managed(crm, always_on=["find_contact"])])
    returns = tool_returns(agent.run_sync("find").all_messages())
    assert returns["f1"].outcome == "retried"
    assert json.loads(returns["f1"].content)["error"] == "invalid_arguments"
    assert returns["f2"].outcome == "success"


def test_always_on_may_name_a_wrapped_tool() -> None:
    """Finding 6: ``always_on`` could not name a wrapped tool (not in the catalog yet)."""
    crm = Crm()
    with pytest.warns(UserWarning, match="not in the catalog yet"):
        managed = _managed(crm, always_on=["find_contact"])
    script = Script(_call("find_contact", {"name": "Patel"}, "f1"), "ok")
    Agent(FunctionModel(script), toolsets=[managed]).run_sync("find Patel")
    assert script.listed[0] == ["tool_search", "find_contact"]
    assert crm.runs["find_contact"] == 1
    # A name neither the catalog nor the wrapped toolsets hold is an error once they joined.
    with pytest.warns(UserWarning):
        typo = _managed(crm, always_on=["find_contcat"])
    with pytest.raises(ConfigError, match="find_contcat.*Closest: find_contact"):
        Agent(FunctionModel(Script("ok")), toolsets=[typo]).run_sync("hi")
