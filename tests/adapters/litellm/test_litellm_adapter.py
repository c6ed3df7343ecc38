"""The LiteLLM adapter through real ``litellm`` calls; only the HTTP edge is faked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import httpx  # noqa: E402
import litellm  # noqa: E402
import toolmgmt_litellm  # noqa: E402
from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler  # noqa: E402
from openai import AsyncOpenAI, OpenAI  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from support.openai_edge import completion, tool_calls_message  # noqa: E402
from toolmgmt_litellm import (  # noqa: E402
    ToolManagerCallback,
    completion_with_tools,
    litellm_summarizer,
    run_meta_tool_calls,
    run_meta_tool_calls_sync,
)

from toolmgmt_core import (  # noqa: E402
    Discovery,
    ResultBudget,
    Search,
    ToolCatalog,
    ToolManager,
    count_tokens,
)
from toolmgmt_core._calls.truncation import summarize_result  # noqa: E402

MAX_RESULT_TOKENS = 300

APP_TOOL = {
    "type": "function",
    "function": {
        "name": "app_fetch_logs",
        "description": "Fetch the application's own logs.",
        "parameters": {"type": "object", "properties": {}},
    },
}


def _manager(**extra: Any) -> ToolManager:
    extra.setdefault("results", ResultBudget(max_result_tokens=MAX_RESULT_TOKENS))
    # found tools join the list: what these tests follow (the stable list has its own tests)
    return demo_manager(Search(appends=True), **extra)


class FakeOpenAI:
    """An OpenAI-compatible HTTP edge: answers from a script, records each request body."""

    def __init__(self, script: list[list[tuple[str, dict[str, Any]]] | str]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []

    def tools(self, step: int) -> list[str]:
        return [t["function"]["name"] for t in self.requests[step].get("tools", [])]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        step = self.script[len(self.requests) - 1]
        if isinstance(step, str):
            message: dict[str, Any] = {"role": "assistant", "content": step}
        else:
            message = tool_calls_message(step, prefix=f"call_{len(self.requests)}")
        return completion(message, number=len(self.requests))

    def async_client(self) -> AsyncOpenAI:
        return AsyncOpenAI(api_key="sk-test", http_client=httpx.AsyncClient(transport=self._t()))

    def sync_client(self) -> OpenAI:
        return OpenAI(api_key="sk-test", http_client=httpx.Client(transport=self._t()))

    def _t(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved


SCRIPT: list[list[tuple[str, dict[str, Any]]] | str] = [
    [("tool_search", {"query": "search crm contacts by name"})],
    [("crm_search_contacts", {"query": "patel", "limit": 2})],
    [("tool_search", {"query": "export all contacts csv backup"})],
    [("crm_export_contacts", {"format": "csv"}), ("app_fetch_logs", {})],
    [("crm_delete_contact", {"contact_id": "con_0001"})],
    "Done.",
]


def _expected_tools(manager: ToolManager) -> list[list[str]]:
    reference = manager.session()
    expected = []
    for step in SCRIPT:
        expected.append([t.name for t in reference.tools()] + ["app_fetch_logs"])
        for name, args in step if not isinstance(step, str) else []:
            if name == "tool_search":
                reference.call_sync(name, args)
    return expected


def _answer(message: Any, answered: list[dict[str, Any]], app_result: str) -> list[dict[str, Any]]:
    done = {m["tool_call_id"] for m in answered}
    for call in message.tool_calls:  # the app answers its own tools
        if call.id not in done:
            assert call.function.name == "app_fetch_logs"
            answered.append({"role": "tool", "tool_call_id": call.id, "content": app_result})
    return answered


@pytest.mark.parametrize("use_async", [False, True], ids=["sync-wrapper", "async-callback"])
def test_full_loop(callbacks: list[Any], use_async: bool) -> None:
    manager = _manager()
    callback = ToolManagerCallback(manager)
    callbacks.append(callback)
    session = callback.session("conv-1")
    fake = FakeOpenAI(SCRIPT)
    big_logs = "\n".join(
        f"2026-01-01 12:00:{i % 60:02d} worker-{i} request ok" for i in range(3000)
    )
    request: dict[str, Any] = {"model": "openai/gpt-4o-mini", "tools": [APP_TOOL]}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find Patel, export all."}]

    async def async_loop() -> None:
        client = fake.async_client()
        for _ in SCRIPT:
            response = await litellm.acompletion(
                **request, messages=messages, client=client, metadata={"toolmgmt_session": "conv-1"}
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            answered = await run_meta_tool_calls(
                session, response, all_tools=True, app_tools=request["tools"]
            )
            messages.extend(_answer(message, answered, big_logs))

    def sync_loop() -> None:
        client = fake.sync_client()
        for _ in SCRIPT:
            response = completion_with_tools(session, **request, messages=messages, client=client)
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            answered = run_meta_tool_calls_sync(
                session, response, all_tools=True, app_tools=["app_fetch_logs"]
            )
            messages.extend(_answer(message, answered, big_logs))

    if use_async:
        asyncio.run(async_loop())
    else:
        sync_loop()
    assert messages[-1]["content"] == "Done."
    seen = [fake.tools(i) for i in range(len(SCRIPT))]
    assert seen == _expected_tools(manager)
    assert seen[0][0] == "tool_search" and "crm_search_contacts" in seen[1]
    assert "crm_export_contacts" in seen[3]
    assert not any("crm_delete_contact" in names for names in seen)

    tool_messages = {m["tool_call_id"]: m for m in messages if m.get("role") == "tool"}
    assert "crm_search_contacts" in tool_messages["call_1_0"]["content"]
    assert "patel" in tool_messages["call_2_0"]["content"].lower()
    refused = json.loads(tool_messages["call_5_0"]["content"])
    assert refused["kind"] == "call" and "crm_delete_contact" in refused["message"]
    # Every request went out with the session's tools: its state followed the loop.
    assert "crm_export_contacts" in session.loaded()
    exporter = manager.catalog.get("crm_export_contacts")
    budget = exporter.max_result_tokens or MAX_RESULT_TOKENS
    assert count_tokens(tool_messages["call_4_0"]["content"]) <= budget
    # The session's own (named) result keeps its tool's budget on the wire: not cut again.
    wire = {m.get("tool_call_id"): m for m in fake.requests[4]["messages"]}
    assert wire["call_4_0"]["content"] == tool_messages["call_4_0"]["content"]
    # The app's own oversized result was cut in the next request on the wire.
    assert count_tokens(wire["call_4_1"]["content"]) <= MAX_RESULT_TOKENS < count_tokens(big_logs)
    assert tool_messages["call_4_1"]["content"] == big_logs  # the app's own list is untouched


def test_anthropic_target_gets_anthropic_tools(callbacks: list[Any]) -> None:
    manager = _manager()
    callbacks.append(ToolManagerCallback(manager))
    bodies: list[dict[str, Any]] = []

    def anthropic(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    handler = AsyncHTTPHandler()
    handler.client = httpx.AsyncClient(transport=httpx.MockTransport(anthropic))
    asyncio.run(
        litellm.acompletion(
            model="anthropic/claude-sonnet-4-5",
            messages=[{"role": "user", "content": "hi"}],
            client=handler,
            api_key="sk-ant-test",
            metadata={"toolmgmt_session": "a"},
        )
    )
    tools = bodies[0]["tools"]
    assert [t["name"] for t in tools] == [t.name for t in manager.session().tools()]
    assert all("input_schema" in t for t in tools)


def test_requests_without_a_session_are_left_alone(callbacks: list[Any]) -> None:
    callbacks.append(ToolManagerCallback(_manager()))
    fake = FakeOpenAI(["plain"])
    asyncio.run(
        litellm.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            tools=[APP_TOOL],
            client=fake.async_client(),
        )
    )
    assert fake.tools(0) == ["app_fetch_logs"]
    # Only chat completions are touched, whatever the metadata says.
    callback = callbacks[-1]
    kwargs = {"model": "openai/text-embedding-3-small", "input": ["x"], "metadata": {}}
    kwargs["metadata"]["toolmgmt_session"] = "e"
    assert asyncio.run(callback.async_pre_call_deployment_hook(kwargs, "aembedding")) is None
    hooked = asyncio.run(callback.async_pre_call_deployment_hook(kwargs, "acompletion"))
    assert hooked is not None and hooked["tools"]


def test_sync_path_needs_the_wrapper(callbacks: list[Any]) -> None:
    manager = _manager()
    callbacks.append(ToolManagerCallback(manager))
    session = manager.session()
    fake = FakeOpenAI(["a", [("tool_search", {"query": "calendar events"})], "b"])
    client = fake.sync_client()
    messages = [{"role": "user", "content": "hi"}]
    # LiteLLM runs no request-changing hook on the sync path: the callback cannot help here,
    # and says so.
    with pytest.warns(UserWarning, match="completion_with_tools"):
        litellm.completion(
            model="openai/gpt-4o-mini",
            messages=messages,
            client=client,
            tools=[APP_TOOL],
            metadata={"toolmgmt_session": "s"},
        )
    assert fake.tools(0) == ["app_fetch_logs"]
    response = completion_with_tools(
        session, model="openai/gpt-4o-mini", messages=messages, client=client, tools=[APP_TOOL]
    )
    assert fake.tools(1) == [t.name for t in manager.session().tools()] + ["app_fetch_logs"]
    results = run_meta_tool_calls_sync(session, response)
    assert [r["role"] for r in results] == ["tool"] and "calendar" in results[0]["content"]
    completion_with_tools(session, model="openai/gpt-4o-mini", messages=messages, client=client)
    assert any(n.startswith("calendar_") for n in fake.tools(2)[1:])
    assert fake.tools(2) == [t.name for t in session.tools()]


def test_run_meta_tool_calls_leaves_app_calls_to_the_app() -> None:
    session = _manager().session()
    response = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": "1", "function": {"name": "app_fetch_logs", "arguments": "{}"}},
                        {
                            "id": "2",
                            "function": {"name": "tool_search", "arguments": '{"query": "email"}'},
                        },
                        {"id": "3", "function": {"name": "crm_get_contact", "arguments": "{"}},
                        {"id": "4", "function": {"name": "CRM_Get_Contact", "arguments": "{}"}},
                    ]
                }
            }
        ]
    }
    only_meta = run_meta_tool_calls_sync(session, response)
    assert [m["tool_call_id"] for m in only_meta] == ["2"]
    everything = run_meta_tool_calls_sync(session, response, all_tools=True, app_tools=[APP_TOOL])
    assert [m["tool_call_id"] for m in everything] == ["2", "3", "4"]
    assert "email" in everything[0]["content"]
    # Undeclared, the app's tool is a name nobody holds: answered, with the closest names, as
    # at every door (a call left without an answer fails the next request).
    [unknown, *_] = run_meta_tool_calls_sync(session, response, all_tools=True)
    assert unknown["tool_call_id"] == "1"
    assert json.loads(unknown["content"])["error"] == "unknown_tool"
    with pytest.raises(TypeError, match="app_tools takes the names"):
        run_meta_tool_calls_sync(session, response, all_tools=True, app_tools=[{"type": "x"}])
    # Not loaded yet (and the JSON is broken): the session explains, the loop goes on.
    for message in everything[1:]:
        error = json.loads(message["content"])
        assert error["kind"] == "call" and "crm_get_contact" in error["message"]


def test_litellm_summarizer_feeds_core_summaries() -> None:
    big = json.dumps([{"id": i, "name": f"row {i}", "notes": "x" * 40} for i in range(400)])
    summarizer = litellm_summarizer("openai/gpt-4o-mini", mock_response="400 rows, ids 0-399.")
    result = asyncio.run(summarize_result(big, summarizer, 200, tool_name="export", threshold=500))
    assert result.summarized and result.text == "400 rows, ids 0-399."
    edge = FakeOpenAI([""])
    silent = litellm_summarizer("openai/gpt-4o-mini", client=edge.async_client())
    fallback = asyncio.run(summarize_result(big, silent, 200, tool_name="export", threshold=500))
    assert not fallback.summarized and fallback.truncated and fallback.tokens <= 200
    assert "returned no text" in (fallback.note or "")
    assert (
        edge.requests[0]["max_tokens"] == 500
        and big[:50] in edge.requests[0]["messages"][1]["content"]
    )


def test_litellm_summarizer_as_the_managers_summarizer() -> None:
    summary = "All 400 contacts as CSV; ids con_0001 to con_0400."
    manager = _manager(
        discovery=Discovery(call_unloaded="load"),
        results=ResultBudget(
            max_result_tokens=MAX_RESULT_TOKENS,
            summarizer=litellm_summarizer("openai/gpt-4o-mini", mock_response=summary),
        ),
    )
    result = manager.session().call_sync("crm_export_contacts", {"format": "csv"})
    assert result.content == summary and result.truncated
    assert result.original_tokens > 10 * result.tokens


def test_public_surface() -> None:
    # constants, then classes, then functions (the order every module's __all__ keeps)
    kinds = {n: 0 if n.isupper() else 1 if n[:1].isupper() else 2 for n in toolmgmt_litellm.__all__}
    assert toolmgmt_litellm.__all__ == sorted(toolmgmt_litellm.__all__, key=lambda n: (kinds[n], n))
    for name in toolmgmt_litellm.__all__:
        assert hasattr(toolmgmt_litellm, name)
    assert "Usage::" in (toolmgmt_litellm.__doc__ or "")
    with pytest.raises(TypeError, match="ToolManager"):
        ToolManagerCallback(ToolCatalog())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="session id"):
        ToolManagerCallback(_manager()).session("")
