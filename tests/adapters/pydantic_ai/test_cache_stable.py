"""The cache-stable search through ``ManagedToolset``: the tool definitions PydanticAI sends
the model are byte-identical on every step of a run; found tools run through ``call_tool``."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from support.pydantic_ai_messages import tool_returns  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

STEPS: list[Any] = [
    ToolCallPart("tool_search", {"query": "find a customer contact by name"}, tool_call_id="s1"),
    ToolCallPart(
        "call_tool",
        {"tool_name": "crm_search_contacts", "arguments": {"query": "patel"}},
        tool_call_id="c1",
    ),
    ToolCallPart("tool_search", {"query": "list recent payments charges"}, tool_call_id="s2"),
    ToolCallPart(
        "call_tool", {"tool_name": "payments_list_charges", "arguments": {}}, tool_call_id="c2"
    ),
    "Done.",
]


def test_the_tool_definitions_never_change_within_a_run() -> None:
    sent: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        definitions = [
            {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
            for t in info.function_tools
        ]
        sent.append(json.dumps(definitions, sort_keys=True))
        step = STEPS[len(sent) - 1]
        return ModelResponse(parts=[TextPart(step) if isinstance(step, str) else step])

    managed = ManagedToolset(demo_manager("search"))
    result = Agent(FunctionModel(model), toolsets=[managed]).run_sync("Find Patel's charges.")
    assert result.output == "Done."
    assert len(sent) == len(STEPS) and len(set(sent)) == 1, "one tool list for the whole run"
    names = [t["name"] for t in json.loads(sent[0])]
    assert names[:2] == ["tool_search", "call_tool"]
    returns = tool_returns(result.all_messages())
    assert "parameters" in json.loads(returns["s1"].content)["found"]["crm_search_contacts"]
    assert "con_" in json.dumps(returns["c1"].content)
    assert returns["c2"].outcome == "success"
    session = managed.session_for(result.run_id)
    assert {"crm_search_contacts", "payments_list_charges"} <= set(session.loaded())
