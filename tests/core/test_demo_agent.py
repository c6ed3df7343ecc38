"""The demo agent the offline examples run on (``toolmgmt_demo.models``): it searches when it
sees no fitting tool, calls the best-fitting one with arguments from the request, and answers
with the result."""

from __future__ import annotations

import json

from toolmgmt_core import ToolManager
from toolmgmt_demo import demo_catalog
from toolmgmt_demo.models import Offered, ToolCall, next_move, openai_reply, openai_tools

SEARCH = Offered("tool_search", "Search the catalog.", {"type": "object"})
REFUND = Offered(
    "payments_refund_charge",
    "Refund a charge, fully or partly.",
    {
        "type": "object",
        "properties": {
            "charge_id": {"type": "string", "description": "Charge id, e.g. 'ch_0001'."},
            "amount": {"type": "integer"},
            "reason": {"type": "string", "enum": ["duplicate", "fraudulent"]},
        },
        "required": ["charge_id", "reason"],
    },
)
FORECAST = Offered(
    "get_forecast",
    "Get the weather forecast for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def test_it_searches_when_no_listed_tool_fits() -> None:
    move = next_move("Refund charge ch_0042.", [], [SEARCH, FORECAST])
    assert move == ToolCall("tool_search", {"query": "Refund charge ch_0042."})


def test_it_calls_the_fitting_tool_with_values_from_the_request() -> None:
    done = [("tool_search", '{"added": ["payments_refund_charge"]}')]
    move = next_move("Refund charge ch_0042.", done, [SEARCH, FORECAST, REFUND])
    # the id from the request, an enum's first value; optional arguments are left out
    assert move == ToolCall(
        "payments_refund_charge", {"charge_id": "ch_0042", "reason": "duplicate"}
    )
    # a name in the request fills a free-text argument; the first word of a sentence does not
    assert next_move("And the weather in Oslo?", [], [FORECAST]) == ToolCall(
        "get_forecast", {"city": "Oslo"}
    )


def test_it_answers_with_the_result_and_gives_up_after_one_search() -> None:
    done = [("get_forecast", '{"city": "Oslo"}')]
    assert (
        next_move("Weather in Oslo?", done, [FORECAST]) == 'get_forecast answered: {"city": "Oslo"}'
    )
    searched = [("tool_search", '{"added": []}')]
    assert "found no tool" in str(next_move("Book a flight.", searched, [SEARCH]))
    assert len(str(next_move("x", [("get_forecast", "y" * 5000)], []))) < 500


def test_openai_reply_plays_a_whole_conversation_on_a_session() -> None:
    # A refund is destructive: the user says yes (approval is not what this checks).
    session = ToolManager(demo_catalog(), approval=lambda request: True).session()
    messages: list[dict] = [{"role": "user", "content": "Refund charge ch_0001."}]
    for _ in range(4):
        message = openai_reply(messages, session)["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            break
        call = message["tool_calls"][0]["function"]
        result = session.call_sync(call["name"], json.loads(call["arguments"]))
        messages.append(
            {
                "role": "tool",
                "tool_call_id": message["tool_calls"][0]["id"],
                "content": result.to_message(),
            }
        )
    called = [m["tool_calls"][0]["function"] for m in messages if m.get("tool_calls")]
    assert [c["name"] for c in called] == ["tool_search", "call_tool"]
    assert json.loads(called[1]["arguments"])["tool_name"] == "payments_refund_charge"
    assert messages[-1]["content"].startswith("payments_refund_charge answered:")
    assert "ch_0001" in messages[-1]["content"]


def test_openai_tools_reads_function_tools_only() -> None:
    tools = [
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
        {"type": "web_search"},
    ]
    assert openai_tools(tools) == [Offered("a", "", {"type": "object"})]
