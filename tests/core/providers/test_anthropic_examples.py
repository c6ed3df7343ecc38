"""Anthropic ``input_examples``: sent when asked, checked against the SDK type and the schema."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from anthropic.types import ToolParam

from toolmgmt_core import Tool
from toolmgmt_core._providers import format_tools
from toolmgmt_demo import demo_catalog

PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Name or email."},
        "limit": {"type": "integer", "minimum": 1, "description": "Most results."},
    },
    "required": ["query"],
}
GOOD = ({"query": "patel", "limit": 5}, {"query": "ana@example.com"})
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}


def _tool(examples: tuple[dict[str, Any], ...] = GOOD) -> Tool:
    return Tool(
        name="crm.search_contacts",
        description="Search contacts.",
        parameters=PARAMETERS,
        input_examples=examples,
    )


def test_the_sdk_tool_param_has_the_field() -> None:
    assert "input_examples" in typing.get_type_hints(ToolParam)


def test_examples_are_sent_when_asked(check_provider: Any) -> None:
    tool = _tool()
    plain = format_tools([tool], "anthropic")["tools"][0]
    assert "input_examples" not in plain  # off by default: the payload does not change
    sent = format_tools([tool], "anthropic", examples=True)["tools"][0]
    assert sent["name"] == "crm_search_contacts"
    assert sent["input_examples"] == [dict(e) for e in GOOD]
    check_provider("anthropic", [sent])


def test_demo_catalog_examples_pass_the_sdk_type(check_provider: Any) -> None:
    tools = list(demo_catalog())
    request = format_tools(tools, "anthropic", native=True, examples=True)
    check_provider("anthropic", request["tools"])
    with_examples = {t.name for t in tools if t.input_examples}
    assert with_examples
    sent = {
        request["report"].original_name(t["name"])
        for t in request["tools"]
        if "input_examples" in t
    }
    assert sent == with_examples


def test_an_example_that_does_not_match_the_schema_is_left_out_and_noted(
    check_provider: Any,
) -> None:
    bad = {"limit": 0}  # no query, limit below its minimum
    request = format_tools([_tool((GOOD[0], bad))], "anthropic", examples=True)
    sent = request["tools"][0]
    assert sent["input_examples"] == [GOOD[0]]
    notes = request["report"].notes["crm.search_contacts"]
    assert any(n.startswith("input example 2 left out") for n in notes), notes
    check_provider("anthropic", [sent])
    only_bad = format_tools([_tool((bad,))], "anthropic", examples=True)["tools"][0]
    assert "input_examples" not in only_bad


def test_cache_tells_examples_apart() -> None:
    first = _tool()
    other = _tool(({"query": "lee"},))  # same schema, other examples: the content cache misses
    assert format_tools([first], "anthropic", examples=True)["tools"][0]["input_examples"] == [
        dict(e) for e in GOOD
    ]
    assert format_tools([other], "anthropic", examples=True)["tools"][0]["input_examples"] == [
        {"query": "lee"}
    ]
    assert "input_examples" not in format_tools([first], "anthropic")["tools"][0]


def test_other_providers_are_unchanged(check_provider: Any) -> None:
    tool = _tool()
    for provider in ("openai", "openai-responses", "gemini"):
        with_flag = format_tools([tool], provider, examples=True)["tools"]
        assert with_flag == format_tools([tool], provider)["tools"]
        check_provider(provider, with_flag)


def test_examples_survive_the_sdk_client() -> None:
    anthropic = pytest.importorskip("anthropic")
    http = pytest.importorskip("httpx2")  # this anthropic SDK speaks httpx2
    seen: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return http.Response(200, json=ANSWER)

    out = format_tools([_tool()], "anthropic", examples=True)
    client = anthropic.Anthropic(
        api_key="test", http_client=http.Client(transport=http.MockTransport(handler))
    )
    client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=[{"role": "user", "content": "Find Patel."}],
        tools=out["tools"],
    )
    assert seen[0]["tools"][0]["input_examples"] == [dict(e) for e in GOOD]
