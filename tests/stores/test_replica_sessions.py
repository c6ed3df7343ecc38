"""Two managers over one Redis (two replicas) serve one conversation: loads, spent budget and
a profile travel, and two replicas changing it at the same moment lose nothing."""

from __future__ import annotations

from typing import Any

import pytest
from support.races import ConflictCounter, race_problems, race_replicas

from toolmgmt_core import ResultBudget, Tool, ToolCatalog, ToolManager

pytest.importorskip("redis")

from toolmgmt_core._stores.redis import RedisSessionStore  # noqa: E402

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
        ToolManager(_catalog(), results=ResultBudget(session_tokens=5_000), session_store=store)
        for store in stores
    ]
    for store in stores:
        store.close()


def test_a_conversation_moves_between_replicas(replicas: list[ToolManager]) -> None:
    a, b = replicas
    a.session("conv").call_sync("tool_search", {"query": "read a file"})
    on_b = b.session("conv")
    assert "read_file" in on_b.loaded()
    result = on_b.call_sync("read_file", {})
    back = a.session("conv")
    assert back.result_budget.used == result.tokens and back.loaded() == on_b.loaded()


def test_two_replicas_changing_one_conversation_at_once_lose_nothing(redis_url: str) -> None:
    # Each replica with its own client; both open the conversation from one version, so each
    # race's second save meets a newer one and must merge.
    stores = [RedisSessionStore(redis_url, ttl=60), RedisSessionStore(redis_url, ttl=60)]
    counters = [ConflictCounter(store) for store in stores]
    a, b = (
        ToolManager(_catalog(), results=ResultBudget(session_tokens=5_000), session_store=store)
        for store in stores
    )
    rounds = 10
    try:
        problems = {}
        for round_ in range(rounds):
            spent = race_replicas(a, b, f"race-{round_}")
            problems[round_] = race_problems(stores[0], f"race-{round_}", spent)
        assert sum(counter.count for counter in counters) >= 2 * rounds
        assert not any(problems.values()), problems
    finally:
        for store in stores:
            store.close()


def test_a_session_held_open_on_one_replica_catches_up_with_the_other(
    replicas: list[ToolManager], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replicas
    held = a.session("held")  # opened once for a run of several steps
    b.session("held").call_sync("tool_search", {"query": "send an email"})
    spent = b.session("held").call_sync("send_email", {})
    assert "send_email" not in held.loaded()
    assert held.refresh_sync() is True
    assert "send_email" in held.loaded()
    assert held.result_budget.used == spent.tokens
    monkeypatch.setattr(a.session_store, "load", _refused)
    assert held.refresh_sync() is False  # one version read, no state loaded


def _refused(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("loaded the state where the version said nothing changed")
