"""Inside an instrumented PydanticAI run, the core's spans nest under PydanticAI's own: its agent
run, then its span for each tool run, then toolmgmt's ``execute_tool`` and ``retrieval`` spans,
with a wrapped tool's own spans under toolmgmt's call (checked with the SDK's in-memory
exporter)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities.instrumentation import Instrumentation  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402
from support.otel import OtelKit, span_text  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402

SECRET = "card-4242-4242-9876"


def _agent(kit: OtelKit) -> Agent[None, str]:
    tracer = kit.tracer
    toolset: FunctionToolset[Any] = FunctionToolset(id="billing")

    @toolset.tool_plain
    def charge_card(card_number: str, amount: int) -> str:
        """Charge a customer's card."""
        with tracer.start_as_current_span("payments.http"):
            return f"charged {amount}"

    steps = [
        [ToolCallPart("tool_search", {"query": "charge a card"}, tool_call_id="call_1")],
        [
            ToolCallPart(
                "call_tool",
                {"tool_name": "charge_card", "arguments": {"card_number": SECRET, "amount": 12}},
                tool_call_id="call_2",
            )
        ],
        "Charged.",
    ]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = steps.pop(0)
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))

    manager = ToolManager(ToolCatalog(), listeners=[kit.listener()])
    settings = InstrumentationSettings(
        tracer_provider=kit.tracer_provider,
        meter_provider=kit.meter_provider,
        include_content=False,
    )
    return Agent(
        FunctionModel(model),
        toolsets=[ManagedToolset(manager, [toolset])],
        capabilities=[Instrumentation(settings=settings)],
    )


def _spans(kit: OtelKit, name: str, scope: str) -> list[Any]:
    return [s for s in kit.spans() if s.name == name and s.instrumentation_scope.name == scope]


def test_spans_nest_under_pydantic_ais_tool_runs() -> None:
    kit = OtelKit()
    result = asyncio.run(_agent(kit).run("Charge the card"))
    assert result.output == "Charged."
    by_id = {s.context.span_id: s for s in kit.spans()}
    # PydanticAI's span of each tool run, then toolmgmt's (same convention, its own scope); a
    # found tool runs through call_tool (the list stays the same), and toolmgmt's span names it
    for tool, run_by in (("tool_search", "tool_search"), ("charge_card", "call_tool")):
        (ours,) = _spans(kit, f"execute_tool {tool}", "toolmgmt")
        (theirs,) = _spans(kit, f"execute_tool {run_by}", "pydantic-ai")
        assert ours.parent.span_id == theirs.context.span_id
        assert by_id[theirs.parent.span_id].name == "invoke_agent agent"
    (ours,) = _spans(kit, "execute_tool charge_card", "toolmgmt")
    assert kit.span("payments.http").parent.span_id == ours.context.span_id
    (search_call,) = _spans(kit, "execute_tool tool_search", "toolmgmt")
    assert kit.span("retrieval toolmgmt.catalog").parent.span_id == search_call.context.span_id
    run = [s for s in kit.spans() if s.parent is None]
    assert [s.name for s in run] == ["invoke_agent agent"]
    assert {s.context.trace_id for s in kit.spans()} == {run[0].context.trace_id}
    assert ours.attributes["gen_ai.tool.call.id"] == "call_2"


def test_no_argument_reaches_toolmgmts_spans_by_default() -> None:
    kit = OtelKit()
    asyncio.run(_agent(kit).run("Charge the card"))
    mine = [s for s in kit.spans() if s.instrumentation_scope.name == "toolmgmt"]
    assert len(mine) == 3
    assert SECRET not in span_text(mine)
