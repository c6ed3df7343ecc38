"""Conversations by id: kept in the manager's session store, shared by managers over one store
(two replicas), merged when two write at once, narrowed when restored."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from support.races import ConflictCounter, race_problems, race_replicas

import toolmgmt_core._session.conversation
from toolmgmt_core import (
    Access,
    ConfigError,
    InvalidSessionError,
    ResultBudget,
    Tool,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._model.errors import StoreUnavailableError
from toolmgmt_core._session.session import ToolSession
from toolmgmt_core._session.state import merge_states, parse_state
from toolmgmt_core._stores import InMemorySessionStore, StoredSession

NAMES = ["send_email", "list_emails", "create_event", "list_events", "read_file", "write_file"]


def _catalog() -> ToolCatalog:
    tools = []
    for name in NAMES:
        verb, noun = name.split("_", 1)
        tools.append(
            Tool(
                name=name,
                description=f"{verb.title()} {noun.replace('_', ' ')} for the user.",
                handler=lambda **_: "x" * 400,
                annotations={"read_only": verb in ("list", "read")},
            )
        )
    return ToolCatalog(tools)


def _pair(store: Any = None, **options: Any) -> tuple[ToolManager, ToolManager]:
    """Two managers over one catalog definition and one store: two replicas."""
    store = store if store is not None else InMemorySessionStore()
    return (
        ToolManager(_catalog(), session_store=store, **options),
        ToolManager(_catalog(), session_store=store, **options),
    )


def test_a_conversation_by_id_keeps_its_loads_between_session_objects() -> None:
    manager = ToolManager(_catalog())
    first = manager.session("conversation-1")
    assert first.session_id == "conversation-1"
    first.call_sync("tool_search", {"query": "send an email"})
    assert "send_email" in first.loaded()
    again = manager.session("conversation-1")
    assert again.loaded() == first.loaded()
    assert [t.name for t in again.tools()] == [t.name for t in first.tools()]
    assert manager.session("conversation-2").loaded() == []
    assert manager.session().session_id is None  # no id: this object only


def test_what_one_replica_loads_the_other_lists_on_its_next_step() -> None:
    a, b = _pair(results=ResultBudget(session_tokens=10_000))
    a.session("c").call_sync("tool_search", {"query": "read a file"})
    step = b.session("c")
    assert "read_file" in step.loaded()
    spent = step.call_sync("read_file", {})
    assert not spent.is_error
    back_on_a = a.session("c")
    assert back_on_a.result_budget.used == spent.tokens  # the spent budget travels too
    assert "read_file" in back_on_a.loaded()


ROUNDS = 20


def _last_writer_wins(stored: Any, **change: Any) -> dict[str, Any]:
    """A broken merge for the control below: the writer's state replaces the stored one."""
    return merge_states(None, **change)


@pytest.mark.parametrize("merge", ["merged", "last_writer_wins"])
def test_two_replicas_changing_one_conversation_at_once_lose_nothing(
    merge: str, monkeypatch: Any
) -> None:
    if merge == "last_writer_wins":  # the control: the same race must catch a lost update
        monkeypatch.setattr(toolmgmt_core._session.conversation, "merge_states", _last_writer_wins)
    store = InMemorySessionStore()
    conflicts = ConflictCounter(store)
    a, b = _pair(store, results=ResultBudget(session_tokens=10_000))
    problems = {}
    for round_ in range(ROUNDS):
        spent = race_replicas(a, b, f"race-{round_}")
        problems[round_] = race_problems(store, f"race-{round_}", spent)
    # Both sessions were opened from one version: each race's second save had to retry.
    assert conflicts.count >= 2 * ROUNDS
    if merge == "merged":
        assert not any(problems.values()), problems
    else:
        assert all(problems.values()), problems


def test_a_profile_chosen_by_code_is_kept_and_stored_state_only_narrows() -> None:
    store = InMemorySessionStore()
    manager = ToolManager(_catalog(), access=Access(profiles=[]), session_store=store)
    session = manager.session("p")
    session.set_profile("readonly")
    assert manager.session("p").profile == "readonly"
    # What the store holds is as untrusted as any state: "full" cannot lift a readonly manager.
    readonly = ToolManager(_catalog(), access="readonly", session_store=store)
    stored = store.load("p")
    assert stored is not None
    store.save("p", {**stored.state, "profile": "full"}, version=stored.version)
    lifted = readonly.session("p")
    assert "write_file" not in [t.name for t in lifted.visible_tools()]
    assert lifted.call_sync("write_file", {}).error.code == "not_permitted"  # type: ignore[union-attr]


def test_bad_ids_and_bad_stored_states_are_refused_clearly() -> None:
    store = InMemorySessionStore()
    manager = ToolManager(_catalog(), session_store=store)
    with pytest.raises(InvalidSessionError, match="visible ASCII"):
        manager.session("two words")
    store.save("bad", {"loaded": "send_email"}, version=0)
    with pytest.raises(ConfigError, match="must be a list of tool names"):
        manager.session("bad")


class _DownStore(InMemorySessionStore):
    """A store whose server went away after the conversation was opened."""

    down = False
    loads = 0

    def save(self, session_id: str, state: Any, *, version: int) -> int:
        if self.down:
            raise StoreUnavailableError("Cannot save: the test store is down.")
        return super().save(session_id, state, version=version)

    def load(self, session_id: str, *, touch: bool = False) -> StoredSession | None:
        if self.down:
            raise StoreUnavailableError("Cannot load: the test store is down.")
        self.loads += 1
        return super().load(session_id, touch=touch)

    def version(self, session_id: str) -> int:
        if self.down:
            raise StoreUnavailableError("Cannot check: the test store is down.")
        return super().version(session_id)


def test_a_store_that_goes_down_fails_no_call_and_catches_up(caplog: Any) -> None:
    store = _DownStore()
    manager = ToolManager(_catalog(), session_store=store)
    session = manager.session("down")
    store.down = True
    with caplog.at_level(logging.ERROR, logger="toolmgmt"):
        result = session.call_sync("tool_search", {"query": "list my emails"})
    assert not result.is_error and "list_emails" in session.loaded()
    assert "could not be saved" in caplog.text
    with pytest.raises(StoreUnavailableError, match="down"):
        manager.session("down")  # opening says so clearly
    store.down = False
    session.call_sync("tool_search", {"query": "read a file"})  # the next change saves both
    assert {"list_emails", "read_file"} <= set(manager.session("down").loaded())


def test_an_expired_conversation_starts_afresh() -> None:
    now = [0.0]
    store = InMemorySessionStore(ttl=60, clock=lambda: now[0])
    manager = ToolManager(_catalog(), session_store=store)
    manager.session("t").call_sync("tool_search", {"query": "send an email"})
    now[0] = 30
    assert manager.session("t").loaded()
    now[0] = 200
    assert manager.session("t").loaded() == []


def test_merge_states_adds_loads_and_records_up_and_keeps_one_of_each() -> None:
    stored = {
        "version": 1,
        "loaded": ["a", "b"],
        "results": {"records": [{"id": "r0", "call_id": "call_1", "tool_name": "a", "tokens": 5}]},
    }
    mine = {
        "records": [
            {"id": "r0", "call_id": "call_1", "tool_name": "a", "tokens": 5},  # the stored one
            {"id": "r1", "call_id": "call_1", "tool_name": "a", "tokens": 5},  # another call
        ],
        "cleared": ["r1"],
    }
    merged = parse_state(merge_states(stored, loaded=["c", "a"], results=mine, profile="x"))
    assert merged.loaded == ("a", "b", "c")
    assert merged.results is not None
    assert [r["id"] for r in merged.results["records"]] == ["r0", "r1"]
    assert merged.results["cleared"] == ["r1"] and merged.profile == "x"
    chosen = merge_states(stored, profile="x")
    assert parse_state(merge_states(chosen, clear_profile=True)).profile is None
    assert parse_state(merge_states(None, loaded=["z"])).loaded == ("z",)


def test_a_session_restored_from_what_was_loaded_saves_without_loading_again() -> None:
    store = _DownStore()
    a, b = _pair(store)
    a.session("r").call_sync("tool_search", {"query": "send an email"})
    stored = store.load("r")
    loads = store.loads
    session = ToolSession.restore(b, "r", stored)  # a server that loaded it for its check
    assert "send_email" in session.loaded()
    session.call_sync("tool_search", {"query": "read a file"})
    assert store.loads == loads  # merged onto what it was restored from: one save, no load
    assert {"send_email", "read_file"} <= set(a.session("r").loaded())
    stale = ToolSession.restore(b, "r", stored)  # another writer saved since: merged anyway
    stale.call_sync("tool_search", {"query": "create a calendar event"})
    assert {"send_email", "read_file", "create_event"} <= set(a.session("r").loaded())
    fresh = ToolSession.restore(b, "new", None)
    assert fresh.session_id == "new" and fresh.loaded() == []


def test_a_session_held_open_catches_up_when_it_refreshes(caplog: Any) -> None:
    store = _DownStore()
    a, b = _pair(store)
    held = a.session("held")  # opened once, as a PydanticAI run does
    b.session("held").call_sync("tool_search", {"query": "send an email"})
    assert "send_email" not in held.loaded()  # held open: not seen until it refreshes
    assert held.refresh_sync() is True
    assert "send_email" in held.loaded()
    loads = store.loads
    assert held.refresh_sync() is False  # nothing new: a version compared, nothing loaded
    assert store.loads == loads
    # A change of its own that the store missed (it was down) is saved by the refresh, merged
    # with what the other replica saved meanwhile.
    store.down = True
    held.call_sync("tool_search", {"query": "read a file"})
    store.down = False
    b.session("held").call_sync("tool_search", {"query": "create a calendar event"})
    assert held.refresh_sync() is True
    assert {"send_email", "read_file", "create_event"} <= set(held.loaded())
    assert {"send_email", "read_file", "create_event"} <= set(b.session("held").loaded())
    store.down = True  # a step while the store is down goes on with what the session holds
    with caplog.at_level(logging.ERROR, logger="toolmgmt"):
        asyncio.run(held.refresh())
    assert "could not be refreshed" in caplog.text and "read_file" in held.loaded()
    store.down = False
    store.delete("held")  # gone from the store: the session keeps what it holds
    assert held.refresh_sync() is False and "read_file" in held.loaded()
    assert a.session().refresh_sync() is False  # no conversation id: nothing to catch up with
