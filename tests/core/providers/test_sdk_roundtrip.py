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

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core.providers import format_tools, strip_strict_nulls
from toolmgmt_core.session.manager import ToolManager


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
    return ToolManager(catalog, mode="search", call_unloaded="load").session()


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
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {"type": "tool_use", "id": "tu_1", "name": SENT_NAME, "input": {"city": "Oslo"}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
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
    deferred = [t for t in seen[0]["tools"] if t.get("defer_loading")]
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
