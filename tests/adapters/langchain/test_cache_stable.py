"""The cache-stable search through the LangChain middleware: the tools bound to the model are
byte-identical for the whole conversation; found tools run through ``call_tool`` (OpenAI
formatting) or natively after a ``tool_reference`` answer (``provider="anthropic"``, checked on
the HTTP request ChatAnthropic sends, with cache breakpoints)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from support.anthropic_edge import message_body  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from toolmgmt_langchain import ToolManagerMiddleware  # noqa: E402

from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


SCRIPT = [
    _call("tool_search", {"queries": ["search crm contacts by name", "export contacts"]}, 1),
    _call("call_tool", {"tool_name": "crm_search_contacts", "arguments": {"query": "patel"}}, 2),
    _call("call_tool", {"tool_name": "crm_export_contacts", "arguments": {"format": "csv"}}, 3),
    AIMessage(content="Done."),
]


def test_the_bound_tools_never_change_and_call_tool_runs_found_tools() -> None:
    sent: list[str] = []
    steps = iter(SCRIPT)

    def model_step(messages: list[Any], tools: list[dict[str, Any]]) -> AIMessage:
        sent.append(json.dumps(tools, sort_keys=True))
        return next(steps)

    model = ScriptedChatModel(script=model_step)
    agent = create_agent(model, middleware=[ToolManagerMiddleware(demo_manager("search"))])
    state = agent.invoke({"messages": [HumanMessage("Find Patel and export the contacts.")]})
    assert len(sent) == 4 and len(set(sent)) == 1, "one tool list for the whole conversation"
    names = [t["function"]["name"] for t in json.loads(sent[0])]
    assert names[:2] == ["tool_search", "call_tool"]
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert "parameters" in json.loads(results["call_1"].content)["found"]["crm_search_contacts"]
    assert results["call_2"].status == "success" and "con_" in results["call_2"].content
    assert results["call_3"].status == "success"
    assert state["messages"][-1].content == "Done."


def test_chat_anthropic_gets_deferral_references_and_breakpoints() -> None:
    pytest.importorskip("langchain_anthropic")
    anthropic = pytest.importorskip("anthropic")
    http = pytest.importorskip("httpx2")  # the anthropic SDK's HTTP client
    from langchain_anthropic import ChatAnthropic

    answers = [
        [
            {
                "type": "tool_use",
                "id": "tu_1",
                "name": "tool_search",
                "input": {"query": "find a customer contact by name"},
            }
        ],
        [
            {
                "type": "tool_use",
                "id": "tu_2",
                "name": "crm_search_contacts",
                "input": {"query": "patel"},
            }
        ],
        [{"type": "text", "text": "Found her."}],
    ]
    bodies: list[dict[str, Any]] = []

    def answer(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        content = answers[len(bodies) - 1]
        body = message_body(content, number=len(bodies), model="claude-sonnet-4-5")
        return http.Response(200, json=body)

    model = ChatAnthropic(model="claude-sonnet-4-5", api_key="test", max_tokens=1024)
    model.__dict__["_client"] = anthropic.Anthropic(
        api_key="test", http_client=http.Client(transport=http.MockTransport(answer))
    )
    manager = demo_manager("search")
    middleware = ToolManagerMiddleware(manager, provider="anthropic")
    agent = create_agent(model, middleware=[middleware])
    state = agent.invoke({"messages": [HumanMessage("Find the customer Patel.")]})

    assert len(bodies) == 3
    tools = [json.dumps(b["tools"], sort_keys=True) for b in bodies]
    assert tools[0] == tools[1] == tools[2], "one tool list for the whole conversation"
    sent = bodies[0]["tools"]
    assert sent[0]["name"] == "tool_search" and "call_tool" not in {t["name"] for t in sent}
    assert "crm_search_contacts" in {t["name"] for t in sent if t.get("defer_loading")}
    up_front = [t for t in sent if not t.get("defer_loading")]
    assert up_front[-1]["cache_control"] == {"type": "ephemeral"}
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in bodies)  # automatic caching
    result = bodies[1]["messages"][-1]["content"][-1]
    assert result["type"] == "tool_result"
    assert {"type": "tool_reference", "tool_name": "crm_search_contacts"} in result["content"]
    ran = [m for m in state["messages"] if isinstance(m, ToolMessage)][-1]
    assert ran.status == "success" and "con_" in ran.content  # called natively, after the search
