"""The cache-stable search through LiteLLM: one tool list for the whole conversation, sent
natively to Anthropic models (deferral, ``tool_reference`` answers, cache breakpoints), as a
stable list with ``call_tool`` to OpenAI's Chat Completions; real ``litellm`` calls, only the
HTTP edge faked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import httpx  # noqa: E402
import litellm  # noqa: E402
from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler  # noqa: E402
from support.anthropic_edge import message_body  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from support.openai_edge import async_client, tool_calls_message  # noqa: E402
from toolmgmt_litellm import ToolManagerCallback, run_meta_tool_calls  # noqa: E402

from toolmgmt_core import ResultBudget  # noqa: E402

SESSION = {"toolmgmt_session": "stable-1"}


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved


def _callback(callbacks: list[Any]) -> ToolManagerCallback:
    callback = ToolManagerCallback(
        demo_manager("search", results=ResultBudget(max_result_tokens=300))
    )
    callbacks.append(callback)
    return callback


def _anthropic_edge(
    bodies: list[dict[str, Any]],
    script: list[list[dict[str, Any]]],
    model: str = "claude-sonnet-4-5",
) -> Any:
    """An Anthropic Messages HTTP edge answering ``script``'s content blocks in turn, its
    responses naming ``model`` (a proxy may name its own alias)."""

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        content = script[len(bodies) - 1]
        body = message_body(content, number=len(bodies), model=model)
        return httpx.Response(200, json=body)

    client = AsyncHTTPHandler()
    client.client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return client


def _use(call_id: str, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]


# The response's model as the edge names it: Anthropic's own, or a proxy's alias (which LiteLLM
# cannot place): either way the calls are answered in the shape the request went out in.
@pytest.mark.parametrize("answered_as", ["claude-sonnet-4-5", "gpt-4o-mini"])
def test_anthropic_models_get_deferral_references_and_breakpoints(
    callbacks: list[Any], answered_as: str
) -> None:
    callback = _callback(callbacks)
    session = callback.session("stable-1")
    bodies: list[dict[str, Any]] = []
    edge = _anthropic_edge(
        bodies,
        [
            _use("tu_1", "tool_search", {"query": "find a customer contact by name"}),
            _use("tu_2", "crm_search_contacts", {"query": "patel"}),
            [{"type": "text", "text": "Found her."}],
        ],
        model=answered_as,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the operations assistant."},
        {"role": "user", "content": "Find the customer Patel."},
    ]

    async def loop() -> None:
        for _ in range(3):
            response = await litellm.acompletion(
                model="anthropic/claude-sonnet-4-5",
                api_key="test",
                client=edge,
                messages=messages,
                metadata=SESSION,
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            messages.extend(await run_meta_tool_calls(session, response, all_tools=True))

    asyncio.run(loop())
    assert len(bodies) == 3
    tools = [json.dumps(body["tools"], sort_keys=True) for body in bodies]
    assert tools[0] == tools[1] == tools[2], "one tool list for the whole conversation"
    sent = bodies[0]["tools"]
    assert sent[0]["name"] == "tool_search" and "call_tool" not in {t["name"] for t in sent}
    deferred = {t["name"] for t in sent if t.get("defer_loading")}
    assert "crm_search_contacts" in deferred and len(deferred) > 100
    assert not any(str(t.get("type", "")).startswith("tool_search_tool") for t in sent)
    up_front = [t for t in sent if not t.get("defer_loading")]
    assert "cache_control" in up_front[-1], "a breakpoint after the tools sent up front"
    assert bodies[0]["system"][-1]["cache_control"] == {"type": "ephemeral"}
    # the search's answer loads the tools where it is: tool_reference blocks
    result = bodies[1]["messages"][-1]["content"][-1]
    assert result["type"] == "tool_result" and result["cache_control"] == {"type": "ephemeral"}
    assert {"type": "tool_reference", "tool_name": "crm_search_contacts"} in result["content"]
    # the found tool was called natively and ran through the session
    ran = bodies[2]["messages"][-1]["content"][-1]
    assert ran["type"] == "tool_result" and "con_" in json.dumps(ran["content"])
    assert "crm_search_contacts" in session.loaded()


def test_a_request_with_its_own_breakpoints_is_left_as_it_is(callbacks: list[Any]) -> None:
    _callback(callbacks)
    bodies: list[dict[str, Any]] = []
    edge = _anthropic_edge(bodies, [[{"type": "text", "text": "ok"}]])
    own = {"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    asyncio.run(
        litellm.acompletion(
            model="anthropic/claude-sonnet-4-5",
            api_key="test",
            client=edge,
            messages=[{"role": "system", "content": [own]}, {"role": "user", "content": "hi"}],
            metadata=SESSION,
        )
    )
    body = bodies[0]
    assert body["system"] == [own]
    assert not any("cache_control" in t for t in body["tools"])
    assert "cache_control" not in json.dumps(body["messages"])


def test_chat_completions_get_the_stable_list_and_call_tool(callbacks: list[Any]) -> None:
    callback = _callback(callbacks)
    session = callback.session("stable-1")
    bodies: list[dict[str, Any]] = []
    script = [
        tool_calls_message([("tool_search", {"query": "find a customer contact by name"})]),
        tool_calls_message(
            [("call_tool", {"tool_name": "crm_search_contacts", "arguments": {"query": "patel"}})],
            prefix="run",
        ),
        {"role": "assistant", "content": "Found her."},
    ]

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        return script[len(bodies) - 1]

    client = async_client(answer)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find the customer Patel."}]

    async def loop() -> None:
        for _ in range(3):
            response = await litellm.acompletion(
                model="openai/gpt-4o-mini", client=client, messages=messages, metadata=SESSION
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            messages.extend(await run_meta_tool_calls(session, response))

    asyncio.run(loop())
    tools = [json.dumps(body["tools"], sort_keys=True) for body in bodies]
    assert len(tools) == 3 and tools[0] == tools[1] == tools[2]
    names = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert names[:2] == ["tool_search", "call_tool"]
    found = json.loads(bodies[1]["messages"][-1]["content"])["found"]
    assert "parameters" in found["crm_search_contacts"]
    assert "con_" in bodies[2]["messages"][-1]["content"]  # call_tool ran the found tool


def test_responses_to_openai_get_a_client_tool_search_answered_by_the_runners() -> None:
    from openai.types.responses import ResponseInputItemParam
    from pydantic import TypeAdapter
    from toolmgmt_litellm import prepare_request, run_meta_tool_calls_sync

    manager = demo_manager("search", results=ResultBudget(max_result_tokens=300))
    session = manager.session()
    request = {"model": "openai/gpt-5.4", "input": "Find Patel."}
    tools = prepare_request(session, request, api="responses")["tools"]
    assert tools[0]["type"] == "tool_search" and tools[0]["execution"] == "client"
    assert "call_tool" not in json.dumps(tools)
    # another provider through the Responses API cannot run a client search: the plain list
    other = prepare_request(
        session, {**request, "model": "anthropic/claude-sonnet-4-5"}, api="responses"
    )
    assert [t["name"] for t in other["tools"][:2]] == ["tool_search", "call_tool"]

    response = {
        "output": [
            {
                "type": "tool_search_call",
                "id": "ts_1",
                "call_id": "call_1",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": "find a customer contact by name"},
            }
        ]
    }
    (answer,) = run_meta_tool_calls_sync(session, response)
    assert answer["type"] == "tool_search_output" and answer["call_id"] == "call_1"
    assert "crm_search_contacts" in [t["name"] for t in answer["tools"]]
    TypeAdapter(ResponseInputItemParam).validate_python(answer, strict=True)
    assert "crm_search_contacts" in session.loaded()
