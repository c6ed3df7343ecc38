"""The callback's conversations live in the manager's session store: never evicted while alive,
and shared by every worker over one Redis (real ``litellm.acompletion``, HTTP edge faked)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import litellm  # noqa: E402
from support.openai_edge import async_client  # noqa: E402
from toolmgmt_litellm import ToolManagerCallback  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    Discovery,
    Search,  # noqa: E402
    ToolCatalog,
    ToolManager,
)
from toolmgmt_demo import demo_catalog  # noqa: E402

DEMO = list(demo_catalog())


def _manager(store: Any = None) -> ToolManager:
    return ToolManager(
        ToolCatalog(DEMO),
        mode=Search(appends=True),
        discovery=Discovery(max_results=3),
        session_store=store,
    )


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved


def _sent_tools(session_id: str) -> list[str]:
    """The tools ``acompletion`` sent for a request naming ``session_id`` (through the
    registered callbacks; the provider's HTTP edge is faked)."""
    bodies: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        return {"role": "assistant", "content": "ok"}

    client = async_client(answer)
    asyncio.run(
        litellm.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            metadata={"toolmgmt_session": session_id},
            client=client,
        )
    )
    return [t["function"]["name"] for t in bodies[0].get("tools", [])]


def test_a_conversation_is_not_evicted_by_many_others(callbacks: list[Any]) -> None:
    callback = ToolManagerCallback(_manager())
    callbacks.append(callback)
    session = callback.session("first")
    session.call_sync("tool_search", {"query": "search crm contacts by name"})
    assert "crm_search_contacts" in _sent_tools("first")

    async def many() -> None:
        for number in range(1_500):  # more than the 1,024 sessions an LRU used to keep
            kwargs = {"metadata": {"toolmgmt_session": f"other-{number}"}, "messages": []}
            await callback.async_pre_call_deployment_hook(kwargs, "acompletion")
            callback.session(f"other-{number}").load(["calendar_create_event"])

    asyncio.run(many())
    assert "crm_search_contacts" in _sent_tools("first")  # still there
    callback.forget("first")
    assert "crm_search_contacts" not in _sent_tools("first")  # ended: a new conversation


def test_workers_over_one_redis_serve_each_others_conversations(
    callbacks: list[Any], redis_url: str
) -> None:
    redis_store = pytest.importorskip("toolmgmt_core._stores.redis")
    stores = [redis_store.RedisSessionStore(redis_url), redis_store.RedisSessionStore(redis_url)]
    first, second = (ToolManagerCallback(_manager(store)) for store in stores)
    # The app's loop runs on the first worker: its meta-tool calls load a tool.
    first.session("shared").call_sync("tool_search", {"query": "search crm contacts by name"})
    # The next request lands on the second worker, which lists what the first one loaded.
    callbacks.append(second)
    assert "crm_search_contacts" in _sent_tools("shared")
    # A conversation the store does not hold yet can start from a saved state (narrowed).
    started = second.session("resumed", {"loaded": ["calendar_create_event"]})
    assert "calendar_create_event" in started.loaded()
    started.call_sync("tool_search", {"query": "send an email"})
    assert {"calendar_create_event", "email_send_draft"} <= set(first.session("resumed").loaded())
    for store in stores:
        store.close()
