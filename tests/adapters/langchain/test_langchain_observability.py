"""Seeing toolmgmt inside a LangChain agent: meta-tool calls are tool runs (callbacks,
``astream_events``) as a bound tool's are, and the core's spans nest under the span of the run
they happen in, with a tool's own spans under its call."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest

pytest.importorskip("langchain")
pytest.importorskip("opentelemetry.sdk")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from support.otel import OtelKit  # noqa: E402
from toolmgmt_langchain import (  # noqa: E402
    ToolManagerMiddleware,
    add_langchain_tools,
    run_tool_calls_sync,
)

from toolmgmt_core import Discovery, ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


SCRIPT = [
    _call("tool_search", {"query": "look up the shipping status of an order"}, 1),
    _call("order_status", {"order_id": "A-17"}, 2),
    AIMessage(content="It shipped."),
]


class ToolRuns(BaseCallbackHandler):
    """The tool runs LangChain reports: (event, tool name, tool call id)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str, str | None]] = []
        self.names: dict[UUID, str] = {}

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kwargs: Any) -> None:
        self.names[kwargs["run_id"]] = serialized["name"]
        self.runs.append(("start", serialized["name"], kwargs.get("tool_call_id")))

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.runs.append(
            ("end", self.names[kwargs["run_id"]], getattr(output, "tool_call_id", None))
        )


def _setup(kit: OtelKit) -> tuple[Any, ScriptedChatModel]:
    tracer = kit.tracer

    @tool
    def order_status(order_id: str) -> str:
        """Look up the shipping status of an order."""
        with tracer.start_as_current_span("orders.http"):  # the tool's own outgoing call
            return f"{order_id}: shipped"

    catalog = ToolCatalog()
    add_langchain_tools(catalog, [order_status])
    manager = ToolManager(catalog, "search", listeners=[kit.listener()])
    model = ScriptedChatModel(script=list(SCRIPT))
    agent = create_agent(model, tools=[], middleware=[ToolManagerMiddleware(manager)])
    return agent, model


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_meta_tool_calls_are_tool_runs_like_a_bound_tools(use_async: bool) -> None:
    agent, _ = _setup(OtelKit())
    runs = ToolRuns()
    payload = {"messages": [HumanMessage("Where is order A-17?")]}
    config = {"callbacks": [runs]}
    if use_async:
        asyncio.run(agent.ainvoke(payload, config))
    else:
        agent.invoke(payload, config)
    assert runs.runs == [
        ("start", "tool_search", "call_1"),
        ("end", "tool_search", "call_1"),
        ("start", "order_status", None),  # the bound tool, run by the session's pipeline
        ("end", "order_status", None),
    ]


def test_astream_events_show_discovery() -> None:
    agent, _ = _setup(OtelKit())

    async def collect() -> list[dict[str, Any]]:
        payload = {"messages": [HumanMessage("Where is order A-17?")]}
        return [e async for e in agent.astream_events(payload, version="v2")]

    events = asyncio.run(collect())
    tool_events = [(e["event"], e["name"]) for e in events if e["event"].startswith("on_tool")]
    assert tool_events == [
        ("on_tool_start", "tool_search"),
        ("on_tool_end", "tool_search"),
        ("on_tool_start", "order_status"),
        ("on_tool_end", "order_status"),
    ]
    start = next(e for e in events if e["event"] == "on_tool_start")
    assert start["data"]["input"] == {"query": "look up the shipping status of an order"}
    end = next(e for e in events if e["event"] == "on_tool_end")
    assert "order_status" in end["data"]["output"].content  # what the model got


def test_spans_nest_under_the_run_and_the_tools_own_spans_under_the_call() -> None:
    kit = OtelKit()
    agent, _ = _setup(kit)
    with kit.tracer.start_as_current_span("invoke_agent support") as run:
        agent.invoke({"messages": [HumanMessage("Where is order A-17?")]}, {"configurable": {}})
    search_call = kit.span("execute_tool tool_search")
    retrieval = kit.span("retrieval toolmgmt.catalog")
    call = kit.span("execute_tool order_status")
    http = kit.span("orders.http")
    root = run.get_span_context()
    assert search_call.parent.span_id == root.span_id
    assert call.parent.span_id == root.span_id
    assert retrieval.parent.span_id == search_call.context.span_id
    assert http.parent.span_id == call.context.span_id
    assert {s.context.trace_id for s in kit.spans()} == {root.trace_id}
    assert search_call.attributes["gen_ai.tool.call.id"] == "call_1"
    assert call.attributes["gen_ai.tool.call.id"] == "call_2"


def test_a_graph_thread_names_the_conversation_in_events() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    seen: list[str] = []
    catalog = ToolCatalog()

    @tool
    def order_status(order_id: str) -> str:
        """Look up the shipping status of an order."""
        return "shipped"

    add_langchain_tools(catalog, [order_status])
    manager = ToolManager(catalog, listeners=[lambda e: seen.append(e.conversation)])
    model = ScriptedChatModel(script=list(SCRIPT))
    agent = create_agent(
        model, tools=[], middleware=[ToolManagerMiddleware(manager)], checkpointer=InMemorySaver()
    )
    agent.invoke(
        {"messages": [HumanMessage("Where is order A-17?")]},
        {"configurable": {"thread_id": "support-42"}},
    )
    assert seen and set(seen) == {"support-42"}


def test_a_hand_written_loop_reports_every_call_as_a_tool_run() -> None:
    """Meta-tools and catalog tools that are not LangChain tools (functions, MCP upstreams')
    are reported as tool runs; unknown names are not (there is no tool to run)."""

    def refund_order(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    catalog = ToolCatalog()
    catalog.add_function(refund_order)
    manager = ToolManager(catalog, "search", discovery=Discovery(call_unloaded="load"))
    runs = ToolRuns()
    from langchain_core.runnables import RunnableLambda

    session = manager.session()

    def step(message: AIMessage) -> Any:
        return run_tool_calls_sync(session, message)

    message = AIMessage(
        content="",
        tool_calls=[
            {"name": "tool_search", "args": {"query": "refund"}, "id": "call_1"},
            {"name": "refund_order", "args": {"order_id": "A-1"}, "id": "call_2"},
            {"name": "no_such_tool", "args": {}, "id": "call_3"},
        ],
    )
    messages = RunnableLambda(step).invoke(message, {"callbacks": [runs]})
    assert [m.tool_call_id for m in messages] == ["call_1", "call_2", "call_3"]
    assert messages[1].content == "refunded A-1" and messages[2].status == "error"
    assert runs.runs == [
        ("start", "tool_search", "call_1"),
        ("end", "tool_search", "call_1"),
        ("start", "refund_order", "call_2"),
        ("end", "refund_order", "call_2"),
    ]
