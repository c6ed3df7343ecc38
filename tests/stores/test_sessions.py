"""Session stores: the in-memory one and Redis (a real redis-server), one contract."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core._model.errors import (
    ConfigError,
    InvalidSessionError,
    SessionConflictError,
    StoreError,
    StoreUnavailableError,
)
from toolmgmt_core._stores import (
    MAX_SESSION_ID_LENGTH,
    InMemorySessionStore,
    SessionStore,
    StoredSession,
    update_session,
)

redis = pytest.importorskip("redis")
from toolmgmt_core._stores.redis import RedisSessionStore  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

MakeStore = Callable[..., SessionStore]


@pytest.fixture(params=["memory", "redis"])
def make_store(request: pytest.FixtureRequest) -> Iterator[MakeStore]:
    """A factory of stores of one kind sharing one backend (two replicas' stores)."""
    if request.param == "memory":
        shared: dict[str, InMemorySessionStore] = {}

        def memory(**options: Any) -> SessionStore:
            # "Replicas" of an in-memory store are the same object: it is one process's memory.
            key = json.dumps(options, sort_keys=True)
            return shared.setdefault(key, InMemorySessionStore(**options))

        yield memory
        return
    url = request.getfixturevalue("redis_url")
    made: list[RedisSessionStore] = []

    def make(**options: Any) -> SessionStore:
        store = RedisSessionStore(url, **options)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def add_name(name: str, pause: float = 0.0) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
    """A change adding ``name`` to the state's loaded list (what loading a tool does)."""

    def change(state: dict[str, Any] | None) -> dict[str, Any]:
        state = state or {"loaded": []}
        if pause:
            time.sleep(random.uniform(0, pause))  # widen the load-save window: force races
        if name not in state["loaded"]:
            state["loaded"].append(name)
        return state

    return change


def test_stores_follow_the_protocol(make_store: MakeStore) -> None:
    assert isinstance(make_store(), SessionStore)


def test_save_load_delete_and_versions(make_store: MakeStore) -> None:
    store = make_store()
    assert store.load("s1") is None
    first = store.save("s1", {"loaded": ["a"]}, version=0)
    assert store.load("s1") == StoredSession({"loaded": ["a"]}, first)
    second = store.save("s1", {"loaded": ["a", "b"]}, version=first)
    assert second > first
    assert store.load("s1") == StoredSession({"loaded": ["a", "b"]}, second)
    store.delete("s1")
    store.delete("s1")  # deleting nothing is fine
    assert store.load("s1") is None
    again = store.save("s1", {"fresh": True}, version=0)
    # Started again, the session never reuses a version: a writer still holding one from
    # before the delete (or an expiry) cannot overwrite the new session.
    assert again > second
    with pytest.raises(SessionConflictError):
        store.save("s1", {"stale": True}, version=first)
    with pytest.raises(SessionConflictError):
        store.save("s1", {"stale": True}, version=second)
    assert store.load("s1") == StoredSession({"fresh": True}, again)


def test_a_loaded_state_is_a_copy(make_store: MakeStore) -> None:
    store = make_store()
    state = {"loaded": ["a"]}
    store.save("s", state, version=0)
    state["loaded"].append("changed after saving")
    loaded = store.load("s")
    assert loaded is not None and loaded.state == {"loaded": ["a"]}
    loaded.state["loaded"].append("changed after loading")
    assert store.load("s") == StoredSession({"loaded": ["a"]}, 1)


def test_a_stale_version_conflicts_and_writes_nothing(make_store: MakeStore) -> None:
    mine, theirs = make_store(), make_store()
    mine.save("s", {"loaded": []}, version=0)
    seen = mine.load("s")
    assert seen is not None
    theirs.save("s", {"loaded": ["theirs"]}, version=seen.version)
    with pytest.raises(SessionConflictError, match="expected version 1, found version 2"):
        mine.save("s", {"loaded": ["mine"]}, version=seen.version)
    assert mine.load("s") == StoredSession({"loaded": ["theirs"]}, 2)
    with pytest.raises(SessionConflictError, match="no session"):
        mine.save("new", {}, version=3)  # a version for a session that does not exist
    with pytest.raises(SessionConflictError):
        mine.save("s", {}, version=0)  # "new" while it exists


def test_update_session_reapplies_the_change_after_a_conflict(make_store: MakeStore) -> None:
    store, other = make_store(), make_store()
    store.save("s", {"loaded": ["first"]}, version=0)
    calls: list[list[str] | None] = []

    def change(state: dict[str, Any] | None) -> dict[str, Any]:
        assert state is not None
        calls.append(list(state["loaded"]))
        if len(calls) == 1:  # another replica saves between our load and our save
            other.save("s", {"loaded": ["first", "theirs"]}, version=1)
        state["loaded"].append("mine")
        return state

    result = update_session(store, "s", change)
    assert calls == [["first"], ["first", "theirs"]]  # re-applied on the fresh state
    assert result == StoredSession({"loaded": ["first", "theirs", "mine"]}, 3)
    assert store.load("s") == result


def test_update_session_from_a_known_state_loads_only_after_a_conflict(
    make_store: MakeStore,
) -> None:
    store, other = make_store(), make_store()
    known = StoredSession({"loaded": ["first"]}, store.save("s", {"loaded": ["first"]}, version=0))
    seen: list[list[str]] = []

    def change(state: dict[str, Any] | None) -> dict[str, Any]:
        assert state is not None
        seen.append(list(state["loaded"]))
        return {"loaded": [*state["loaded"], "mine"]}

    saved = update_session(store, "s", change, current=known)  # nobody wrote: no load
    assert seen == [["first"]] and saved.state == {"loaded": ["first", "mine"]}
    other.save("s", {"loaded": ["first", "mine", "theirs"]}, version=saved.version)
    again = update_session(store, "s", change, current=saved)  # stale: conflicts, reloads
    assert seen[1:] == [["first", "mine"], ["first", "mine", "theirs"]]
    assert again.state == {"loaded": ["first", "mine", "theirs", "mine"]}


def test_update_session_creates_a_missing_session(make_store: MakeStore) -> None:
    store = make_store()
    assert update_session(store, "new", add_name("a")) == StoredSession({"loaded": ["a"]}, 1)


def test_update_session_gives_up_after_the_last_retry(make_store: MakeStore) -> None:
    store, other = make_store(), make_store()
    store.save("s", {"n": 0}, version=0)
    attempts = 0

    def always_overtaken(state: dict[str, Any] | None) -> dict[str, Any]:
        nonlocal attempts
        attempts += 1
        assert state is not None
        current = other.load("s")
        assert current is not None
        other.save("s", {"n": current.state["n"] + 1}, version=current.version)
        return {"n": -1}

    with pytest.raises(SessionConflictError, match="gave up after 3 attempts"):
        update_session(store, "s", always_overtaken, retries=2, backoff=0.001)
    assert attempts == 3
    stored = store.load("s")
    assert stored is not None and stored.state == {"n": 3}  # only the other writer's saves


@pytest.mark.parametrize("shared_session", [False, True], ids=["fresh-session", "one-session"])
def test_two_threads_adding_different_tools_lose_nothing(
    make_store: MakeStore, shared_session: bool
) -> None:
    stores = [make_store(), make_store()]  # two replicas
    rounds = 50
    attempts = [0, 0]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def replica(index: int) -> None:
        store = stores[index]
        try:
            for round_ in range(rounds):
                session = "shared" if shared_session else f"round-{round_}"
                change = add_name(f"tool-{index}-{round_}", pause=0.002)

                def counted(state: dict[str, Any] | None, change: Any = change) -> dict[str, Any]:
                    attempts[index] += 1
                    return change(state)

                barrier.wait(timeout=30)  # both start each round together
                update_session(store, session, counted, retries=50)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=replica, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    if shared_session:
        sessions = {"shared": {f"tool-{i}-{r}" for i in (0, 1) for r in range(rounds)}}
    else:
        sessions = {f"round-{r}": {f"tool-0-{r}", f"tool-1-{r}"} for r in range(rounds)}
    for session, expected in sessions.items():
        stored = stores[0].load(session)
        assert stored is not None
        assert sorted(stored.state["loaded"]) == sorted(expected), session
        assert len(stored.state["loaded"]) == len(expected)  # nothing added twice
    # The writers did collide (a change ran more often than there were updates), so the test
    # exercised the compare-and-set rather than passing by luck of timing.
    assert sum(attempts) > 2 * rounds


_WORKER = """
import sys, time
from toolmgmt_core._stores import update_session
from toolmgmt_core._stores.redis import RedisSessionStore

url, session, prefix, rounds, start_at = sys.argv[1:6]
store = RedisSessionStore(url)
while time.time() < float(start_at):
    time.sleep(0.001)
attempts = 0
for i in range(int(rounds)):
    def change(state, name=f"{prefix}-{i}"):
        global attempts
        attempts += 1
        state = state or {"loaded": []}
        time.sleep(0.001)
        if name not in state["loaded"]:
            state["loaded"].append(name)
        return state
    update_session(store, session, change, retries=100)
print(attempts)
"""


def test_two_processes_adding_different_tools_lose_nothing(redis_url: str) -> None:
    rounds = 50
    start_at = time.time() + 1.5  # both interpreters are up by then
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, redis_url, "proc", f"p{i}", str(rounds), str(start_at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in (0, 1)
    ]
    outputs = [worker.communicate(timeout=120) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    stored = RedisSessionStore(redis_url).load("proc")
    assert stored is not None
    expected = {f"p{i}-{r}" for i in (0, 1) for r in range(rounds)}
    assert sorted(stored.state["loaded"]) == sorted(expected)
    assert stored.version == 2 * rounds  # one saved version per update, however many attempts
    assert sum(int(out) for out, _ in outputs) >= 2 * rounds


def test_sessions_expire_after_the_ttl(make_store: MakeStore) -> None:
    store = make_store(ttl=0.2)
    store.save("s", {"loaded": ["a"]}, version=0)
    assert store.load("s") is not None
    time.sleep(0.45)
    assert store.load("s") is None
    with pytest.raises(SessionConflictError, match="expired or was deleted"):
        store.save("s", {"loaded": ["a", "b"]}, version=1)  # a writer that loaded before
    assert update_session(store, "s", add_name("b")).state == {"loaded": ["b"]}


def test_each_save_restarts_the_ttl_in_memory() -> None:
    now = [0.0]
    store = InMemorySessionStore(ttl=10, clock=lambda: now[0])
    store.save("s", {}, version=0)
    now[0] = 8
    store.save("s", {"n": 1}, version=1)
    now[0] = 16  # 16 s after the first save, 8 after the second
    assert store.load("s") == StoredSession({"n": 1}, 2)
    now[0] = 18.5
    assert store.load("s") is None
    assert len(store) == 0


def test_expired_sessions_are_swept_from_memory() -> None:
    now = [0.0]
    store = InMemorySessionStore(ttl=5, clock=lambda: now[0])
    for i in range(100):
        store.save(f"s{i}", {}, version=0)
    now[0] = 6
    store.save("late", {}, version=0)  # a save sweeps what expired
    assert store._sessions.keys() == {"late"}


def test_each_save_restarts_the_ttl_in_redis(redis_url: str) -> None:
    store = RedisSessionStore(redis_url, ttl=100)
    client = redis.Redis.from_url(redis_url)
    store.save("s", {}, version=0)
    client.pexpire(store.key("s"), 5_000)  # as if 95 s had passed
    store.save("s", {"n": 1}, version=1)
    assert 99_000 < client.pttl(store.key("s")) <= 100_000
    forever = RedisSessionStore(redis_url, ttl=None)
    forever.save("s", {"n": 2}, version=2)
    assert client.pttl(forever.key("s")) == -1  # no expiry


def test_a_touching_load_restarts_the_ttl(make_store: MakeStore) -> None:
    store = make_store(ttl=0.6)
    store.save("s", {"n": 1}, version=0)
    for _ in range(4):  # read every 0.3 s for 1.2 s: kept alive by reads alone
        time.sleep(0.3)
        assert store.load("s", touch=True) == StoredSession({"n": 1}, 1)
    assert store.load("missing", touch=True) is None
    time.sleep(0.9)
    assert store.load("s") is None  # a plain load does not touch


@pytest.mark.parametrize(
    "session_id",
    ["", "x" * (MAX_SESSION_ID_LENGTH + 1), "has space", "new\nline", "tab\t", "café", 42, None],
)
def test_bad_session_ids_are_refused(make_store: MakeStore, session_id: Any) -> None:
    store = make_store()
    for call in (
        lambda: store.load(session_id),
        lambda: store.save(session_id, {}, version=0),
        lambda: store.delete(session_id),
    ):
        with pytest.raises(InvalidSessionError, match="session id"):
            call()


def test_the_longest_and_most_punctuated_ids_are_fine(make_store: MakeStore) -> None:
    store = make_store()
    for session_id in ("x" * MAX_SESSION_ID_LENGTH, "mcp:3f2a-9b/..*?[]{}@!~"):
        version = store.save(session_id, {"ok": True}, version=0)
        assert store.load(session_id) == StoredSession({"ok": True}, version)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (["not", "a", "dict"], "must be a JSON object"),
        ({"tools": {"a", "b"}}, "must be plain JSON"),
        ({"score": float("nan")}, "must be plain JSON"),
        ({1: "non-string key is fine in json"}, None),
    ],
)
def test_states_must_be_plain_json_objects(
    make_store: MakeStore, state: Any, message: str | None
) -> None:
    store = make_store()
    if message is None:
        store.save("s", state, version=0)  # json turns the key into "1"
        assert store.load("s") == StoredSession({"1": "non-string key is fine in json"}, 1)
        return
    with pytest.raises(InvalidSessionError, match=message):
        store.save("s", state, version=0)
    assert store.load("s") is None


def test_oversized_states_are_refused(make_store: MakeStore) -> None:
    store = make_store(max_state_bytes=1000)
    store.save("s", {"x": "a" * 900}, version=0)
    with pytest.raises(InvalidSessionError, match=r"1,0\d\d bytes of JSON; a store accepts"):
        store.save("s", {"x": "a" * 1000}, version=1)
    stored = store.load("s")
    assert stored is not None and stored.version == 1


@pytest.mark.parametrize("version", [-1, 1.0, "1", True, None])
def test_versions_must_be_whole_numbers(make_store: MakeStore, version: Any) -> None:
    with pytest.raises(InvalidSessionError, match="version must be"):
        make_store().save("s", {}, version=version)


def test_corrupt_redis_data_gives_a_clear_error(redis_url: str) -> None:
    store = RedisSessionStore(redis_url)
    client = redis.Redis.from_url(redis_url)
    client.hset(store.key("junk"), mapping={"v": 1, "s": "{not json"})
    with pytest.raises(InvalidSessionError, match="'junk' is not valid JSON"):
        store.load("junk")
    client.hset(store.key("list"), mapping={"v": 1, "s": "[1, 2]"})
    with pytest.raises(InvalidSessionError, match="a JSON list, not an object"):
        store.load("list")
    client.set(store.key("string"), "someone else's key")
    with pytest.raises(StoreError, match="refused"):
        store.load("string")
    store.delete("junk")  # a way out
    assert store.load("junk") is None


def test_prefixes_keep_deployments_apart(redis_url: str) -> None:
    one = RedisSessionStore(redis_url, prefix="one:")
    two = RedisSessionStore(redis_url, prefix="two:")
    one.save("s", {"who": 1}, version=0)
    assert two.load("s") is None
    assert redis.Redis.from_url(redis_url).exists("one:{s}") == 1
    with pytest.raises(ConfigError, match="may not hold braces"):
        RedisSessionStore(redis_url, prefix="toolmgmt:{deployment}:")


def test_unreachable_redis_names_the_server_but_not_the_password(closed_port: int) -> None:
    store = RedisSessionStore(f"redis://:s3cret@127.0.0.1:{closed_port}/0", timeout=1)
    started = time.monotonic()
    for call in (store.ping, lambda: store.load("s"), lambda: store.save("s", {}, version=0)):
        with pytest.raises(StoreUnavailableError) as caught:
            call()
        message = str(caught.value)
        assert f"redis://:***@127.0.0.1:{closed_port}/0" in message
        assert "s3cret" not in message and "s3cret" not in repr(store)
        assert "redis-server is running" in message
    assert time.monotonic() - started < 10  # fails fast, does not hang


def test_a_redis_restart_is_survived(redis_server: Any, redis_url: str) -> None:
    store = RedisSessionStore(redis_url)
    store.save("s", {}, version=0)
    redis_server.stop()
    try:
        with pytest.raises(StoreUnavailableError):
            store.load("s")
    finally:
        redis_server.start()
    assert store.load("s") is None  # this test server keeps nothing on disk; no error though


def test_a_bad_redis_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Not a Redis URL: http://u:\\*\\*\\*@host"):
        RedisSessionStore("http://u:pw@host:1/0")
