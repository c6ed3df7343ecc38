"""Formatted tools go through the real provider SDK clients; only the network is faked.

Each SDK builds its HTTP request from ``format_tools`` output (so the payload survives the SDK's
own serialisation unchanged), the fake server answers with a tool call under the provider-form
name, and the session routes that name back to the original tool.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from support.anthropic_edge import message_body

from toolmgmt_core import Discovery, Tool, ToolCatalog
from toolmgmt_core._providers import format_tools, strip_strict_nulls
from toolmgmt_core._session.manager import ToolManager


def _lookup(city: str, days: int = 1) -> dict[str, Any]:
    return {"city": city, "days": days, "forecast": "sunny"}


TOOL = Tool(
    name="weather.forecast lookup",
    description="Forecast for a city. Use it when asked about the weather.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "Days."},
        },
        "required": ["city"],
    },
    handler=_lookup,
)
SENT_NAME = "weather_forecast_lookup"


def _session() -> Any:
    catalog = ToolCatalog()
    catalog.add(TOOL)
    for i in range(5):
        catalog.add(Tool(name=f"other.tool_{i}", description=f"Other tool {i}."))
    # call_unloaded="load": a tool found by the provider's own search runs when called
    return ToolManager(catalog, mode="search", discovery=Discovery(call_unloaded="load")).session()


def _client(answer: dict[str, Any], seen: list[dict[str, Any]], http: Any = httpx) -> Any:
    """An HTTP client (of the ``http`` package the SDK uses) whose server is fake."""

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return http.Response(200, json=answer)

    return http.Client(transport=http.MockTransport(handler))


def _route(session: Any, name: str, arguments: dict[str, Any]) -> Any:
    result = session.call_sync(name, arguments)
    assert not result.is_error, result.content
    return result.value


def test_anthropic_client_native_request() -> None:
    anthropic = pytest.importorskip("anthropic")
    session = _session()
    out = format_tools(session, "anthropic", native=True, cache_control=True)
    seen: list[dict[str, Any]] = []
    answer = message_body(
        [{"type": "tool_use", "id": "tu_1", "name": SENT_NAME, "input": {"city": "Oslo"}}]
    )
    http = pytest.importorskip("httpx2")  # this anthropic SDK speaks httpx2
    client = anthropic.Anthropic(api_key="test", http_client=_client(answer, seen, http))
    message = client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=out["tools"],
    )
    assert seen[0]["tools"] == out["tools"]
    block = message.content[0]
    assert out["report"].original_name(block.name) == TOOL.name
    assert _route(session, block.name, block.input)["forecast"] == "sunny"


def test_openai_chat_client_strict_with_allowed_tools() -> None:
    openai = pytest.importorskip("openai")
    session = _session()
    out = format_tools([*session.tools(), TOOL], "openai", strict=True, allowed=[TOOL.name])
    seen: list[dict[str, Any]] = []
    answer = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": SENT_NAME,
                                "arguments": json.dumps({"city": "Oslo", "days": None}),
                            },
                        }
                    ],
                },
            }
        ],
    }
    client = openai.OpenAI(api_key="test", http_client=_client(answer, seen))
    completion = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=out["tools"],
        tool_choice=out["tool_choice"],
    )
    assert seen[0]["tools"] == out["tools"] and seen[0]["tool_choice"] == out["tool_choice"]
    call = completion.choices[0].message.tool_calls[0]
    arguments = strip_strict_nulls(json.loads(call.function.arguments), TOOL.parameters)
    assert arguments == {"city": "Oslo"}
    assert _route(session, call.function.name, arguments)["days"] == 1
    # the session drops strict mode's nulls itself: the raw arguments route as well
    raw = json.loads(call.function.arguments)
    assert raw == {"city": "Oslo", "days": None}
    assert _route(session, call.function.name, raw)["days"] == 1


def test_openai_responses_client_native_tool_search() -> None:
    openai = pytest.importorskip("openai")
    session = _session()
    out = format_tools(session, "openai-responses", native=True, strict=True)
    assert out["tools"][0] == {"type": "tool_search"}
    seen: list[dict[str, Any]] = []
    answer = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": SENT_NAME,
                "arguments": json.dumps({"city": "Oslo", "days": 3}),
                "status": "completed",
            }
        ],
    }
    client = openai.OpenAI(api_key="test", http_client=_client(answer, seen))
    response = client.responses.create(model="gpt-test", input="Weather?", tools=out["tools"])
    assert seen[0]["tools"] == out["tools"]
    # Deferred functions sit in a namespace per domain (the default), as the SDK sent them.
    inner = [f for t in seen[0]["tools"] if t["type"] == "namespace" for f in t["tools"]]
    deferred = [t for t in [*seen[0]["tools"], *inner] if t.get("defer_loading")]
    assert SENT_NAME in {t["name"] for t in deferred}
    item = response.output[0]
    assert _route(session, item.name, json.loads(item.arguments))["days"] == 3


def test_gemini_client_request() -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    session = _session()
    out = format_tools([TOOL, *session.tools()], "gemini", allowed=[TOOL.name])
    seen: list[dict[str, Any]] = []
    answer = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": SENT_NAME, "args": {"city": "Oslo"}}}],
                },
                "finishReason": "STOP",
            }
        ]
    }
    client = genai.Client(
        api_key="test",
        http_options=types.HttpOptions(httpx_client=_client(answer, seen)),
    )
    config = types.GenerateContentConfig(tools=out["tools"], tool_config=out["tool_config"])
    response = client.models.generate_content(
        model="gemini-test", contents="Weather in Oslo?", config=config
    )
    sent = seen[0]["tools"][0]["functionDeclarations"]
    weather = next(d for d in sent if d["name"] == SENT_NAME)
    assert weather["parameters"]["properties"]["days"]["type"] == "INTEGER"
    assert seen[0]["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] == [SENT_NAME]
    call = response.function_calls[0]
    assert _route(session, call.name, dict(call.args))["city"] == "Oslo"


# -- the cache-stable search with the provider's deferral, searched by toolmgmt ----------------


def _stable_session() -> Any:
    catalog = ToolCatalog()
    catalog.add(TOOL)
    for i in range(5):
        catalog.add(Tool(name=f"other.tool_{i}", description=f"Other tool {i}."))
    return ToolManager(catalog, mode="search").session()  # a direct call needs a search first


def _strict(kind: Any, value: Any) -> None:
    from pydantic import TypeAdapter

    TypeAdapter(kind).validate_python(value, strict=True)


def test_anthropic_client_deferral_with_toolmgmts_search() -> None:
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import MessageParam, ToolParam

    from toolmgmt_core._providers import search_result_content

    session = _stable_session()
    out = format_tools(session, "anthropic")  # native by default for a cache-stable session
    names = [t["name"] for t in out["tools"]]
    assert names[0] == "tool_search" and "call_tool" not in names
    assert not any(str(t.get("type", "")).startswith("tool_search_tool") for t in out["tools"])
    assert {t["name"] for t in out["tools"] if t.get("defer_loading")} == set(names[1:])
    for tool in out["tools"]:
        _strict(ToolParam, tool)
    answers = [
        [{"type": "tool_use", "id": "tu_1", "name": "tool_search", "input": {"query": "weather"}}],
        [{"type": "tool_use", "id": "tu_2", "name": SENT_NAME, "input": {"city": "Oslo"}}],
    ]
    seen: list[dict[str, Any]] = []
    http = pytest.importorskip("httpx2")

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return http.Response(200, json=message_body(answers[len(seen) - 1], number=len(seen)))

    client = anthropic.Anthropic(
        api_key="test", http_client=http.Client(transport=http.MockTransport(handler))
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"}]
    for _ in answers:
        tools = format_tools(session, "anthropic")
        message = client.messages.create(
            model="claude-test", max_tokens=100, messages=messages, tools=tools["tools"]
        )
        block = message.content[0]
        result = session.call_sync(block.name, block.input)
        assert not result.is_error, result.content
        content = (
            search_result_content(result, names=tools["report"].name_map)
            if block.name == "tool_search"
            else result.to_message()
        )
        messages += [
            {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": block.id, "content": content}],
            },
        ]
    assert seen[0]["tools"] == seen[1]["tools"] == out["tools"], "byte-identical tools"
    references = messages[2]["content"][0]["content"]
    assert {"type": "tool_reference", "tool_name": SENT_NAME} in references
    for message in messages:
        _strict(MessageParam, message)
    assert result.value["forecast"] == "sunny"  # the found tool, called natively


def test_openai_responses_client_tool_search_with_toolmgmts_search() -> None:
    openai = pytest.importorskip("openai")
    from openai.types.responses import ResponseInputItemParam, ToolParam

    from toolmgmt_core._providers import search_output_item

    session = _stable_session()
    out = format_tools(session, "openai-responses")
    assert out["tools"][0]["type"] == "tool_search" and out["tools"][0]["execution"] == "client"
    assert len(out["tools"]) == 1, "nothing deferred is declared: the search brings it"
    for tool in out["tools"]:
        _strict(ToolParam, tool)
    outputs = [
        {
            "type": "tool_search_call",
            "id": "ts_1",
            "call_id": "call_1",
            "execution": "client",
            "status": "completed",
            "arguments": {"query": "weather forecast"},
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": SENT_NAME,
            "arguments": json.dumps({"city": "Oslo", "days": 2}),
            "status": "completed",
        },
    ]
    seen: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": f"resp_{len(seen)}",
                "object": "response",
                "created_at": 0,
                "model": "gpt-test",
                "status": "completed",
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "output": [outputs[len(seen) - 1]],
            },
        )

    client = openai.OpenAI(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    items: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"}]
    for _ in outputs:
        tools = format_tools(session, "openai-responses")["tools"]
        response = client.responses.create(model="gpt-test", input=items, tools=tools)
        item = response.output[0]
        if item.type == "tool_search_call":
            result = session.call_sync("tool_search", item.arguments)
            answer = search_output_item(result, item.call_id)
        else:
            result = session.call_sync(item.name, json.loads(item.arguments))
            answer = {"type": "function_call_output", "call_id": item.call_id, "output": "ok"}
        assert not result.is_error, result.content
        items += [item.model_dump(exclude_none=True), answer]
    assert seen[0]["tools"] == seen[1]["tools"] == out["tools"], "byte-identical tools"
    loaded = items[2]["tools"]
    assert SENT_NAME in [t["name"] for t in loaded]
    for value in items[1:]:
        _strict(ResponseInputItemParam, value)
    assert result.value["days"] == 2
