"""Two managers over one Redis (two replicas) serve one conversation: loads, spent budget and
a profile travel, and two replicas loading at the same moment lose nothing."""

from __future__ import annotations

from typing import Any

import pytest
from support.races import load_at_once

from toolmgmt_core import Tool, ToolCatalog, ToolManager

pytest.importorskip("redis")

from toolmgmt_core.stores.redis import RedisSessionStore  # noqa: E402

NAMES = ["send_email", "list_emails", "create_event", "list_events", "read_file", "write_file"]


def _catalog() -> ToolCatalog:
    return ToolCatalog(
        Tool(
            name=name,
            description=f"{name.split('_')[0].title()} {name.split('_', 1)[1]} for the user.",
            handler=lambda **_: "ok " * 50,
        )
        for name in NAMES
    )


@pytest.fixture
def replicas(redis_url: str) -> Any:
    """Two managers, each with its own Redis client, over one Redis."""
    stores = [RedisSessionStore(redis_url, ttl=60), RedisSessionStore(redis_url, ttl=60)]
    yield [
        ToolManager(_catalog(), session_store=store, session_result_budget=5_000)
        for store in stores
    ]
    for store in stores:
        store.close()


def test_a_conversation_moves_between_replicas(replicas: list[ToolManager]) -> None:
    a, b = replicas
    a.session("conv").call_sync("tool_search", {"query": "read a file"})
    on_b = b.session("conv")
    assert "read_file" in [t.name for t in on_b.tools()]
    result = on_b.call_sync("read_file", {})
    back = a.session("conv")
    assert back.result_budget.used == result.tokens and back.loaded() == on_b.loaded()


def test_loads_at_the_same_moment_on_two_replicas_add_up(replicas: list[ToolManager]) -> None:
    a, b = replicas
    for round_ in range(25):
        conversation = f"race-{round_}"
        sessions = [a.session(conversation), b.session(conversation)]
        load_at_once(sessions, ["send an email", "create a calendar event"])
        assert {"send_email", "create_event"} <= set(a.session(conversation).loaded()), round_
