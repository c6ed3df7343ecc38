"""Slow stores (issue 25, items 2 and 4): a Redis under ``CLIENT PAUSE`` or ``DEBUG SLEEP`` and a
PostgreSQL backend stopped with SIGSTOP cost an operation its deadline, not a hang; a call that
runs meanwhile finishes and says its record could not be saved; a follower whose listening
backend stalls notices it by its heartbeat and resynchronises (real servers)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolmgmt_core import Discovery, Tool, ToolCatalog, ToolManager
from toolmgmt_core._model.errors import StoreUnavailableError
from toolmgmt_core._stores import StoreTimeout

redis = pytest.importorskip("redis")
psycopg = pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres import PostgresCatalogStore, PostgresEmbeddingCache  # noqa: E402
from toolmgmt_core._stores.redis import RedisSessionStore  # noqa: E402

PAUSE_MS = 5000
"""How long Redis is paused: well past every deadline here, so an operation that waits for the
pause to end (instead of giving up at its deadline) fails the test."""


def elapsed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.monotonic()
    try:
        outcome: Any = action()
    except Exception as exc:  # noqa: BLE001 - the outcome is what is asserted
        outcome = exc
    return time.monotonic() - started, outcome


@contextlib.contextmanager
def paused(url: str, how: str) -> Iterator[None]:
    """Redis stops answering: ``CLIENT PAUSE`` (every client's commands wait) or ``DEBUG
    SLEEP`` (the server itself blocks), for :data:`PAUSE_MS`; waits out the pause after the
    block."""
    admin = redis.Redis.from_url(url)
    sleeper: threading.Thread | None = None
    until = time.monotonic() + PAUSE_MS / 1000
    if how == "CLIENT PAUSE":
        admin.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")
    else:
        sleeper = threading.Thread(
            target=admin.execute_command, args=("DEBUG", "SLEEP", PAUSE_MS / 1000), daemon=True
        )
        sleeper.start()
        time.sleep(0.2)  # the server is asleep now
    try:
        yield
    finally:
        if sleeper is not None:
            sleeper.join(PAUSE_MS / 1000 + 5)
        time.sleep(max(0.0, until - time.monotonic()))  # the pause holds every client, even this
        admin.close()


@pytest.mark.parametrize("how", ["CLIENT PAUSE", "DEBUG SLEEP"])
def test_a_paused_redis_costs_an_operation_its_deadline_not_a_hang(
    redis_url: str, how: str
) -> None:
    store = RedisSessionStore(redis_url)  # the default deadlines: 2 s to connect, 2 s a reply
    assert store.timeout == StoreTimeout(connect=2.0, read=2.0)
    store.save("c1", {"loaded": []}, version=0)
    with paused(redis_url, how):
        took, outcome = elapsed(lambda: store.load("c1"))
        assert isinstance(outcome, StoreUnavailableError), outcome
        assert "did not answer in time" in str(outcome) and "2 s for a reply" in str(outcome)
        assert took < 4.0, took  # one deadline, no retry (it was 4 x 5 s)
    assert store.load("c1") is not None  # and it answers again afterwards
    store.close()


def test_a_call_running_while_redis_pauses_finishes_and_says_it_was_not_saved(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    started = threading.Event()

    def charge(**kwargs: Any) -> str:
        started.set()
        time.sleep(1.0)
        return "charged"

    store = RedisSessionStore(redis_url, timeout=StoreTimeout(connect=1.0, read=1.0))
    catalog = ToolCatalog([Tool("pay_charge", "Charge a card.", handler=charge)])
    manager = ToolManager(catalog, discovery=Discovery(call_unloaded="load"), session_store=store)
    session = manager.session("conversation-1")
    holder: dict[str, Any] = {}

    def call() -> None:
        holder["took"], holder["result"] = elapsed(lambda: session.call_sync("pay_charge", {}))

    caller = threading.Thread(target=call)
    caller.start()
    assert started.wait(10)
    with paused(redis_url, "CLIENT PAUSE"):
        caller.join(PAUSE_MS / 1000 + 10)
        result = holder["result"]
        assert holder["took"] < 5.0, holder["took"]  # 1 s of work and one deadline
    assert not result.is_error and result.content == "charged"  # it ran: its result stands
    assert result.saved is False and "NotSaved" in (result.note or "")
    assert "could not be saved" in caplog.text
    session.call_sync("pay_charge", {})  # the next change saves what was kept meanwhile
    stored = store.load("conversation-1")
    assert stored is not None and len(stored.state["results"]) == 2
    store.close()


# -- PostgreSQL -------------------------------------------------------------------------------


def _backend(dsn: str, application: str) -> int:
    """The newest backend of ``application`` in ``dsn``'s database (a follower of an earlier
    test on the same server may still be connected; it is not the one under test)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
            "AND datname = current_database() ORDER BY backend_start DESC LIMIT 1",
            [application],
        ).fetchone()
    assert row is not None, f"no backend of {application}"
    return int(row[0])


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """A PostgreSQL backend stalled: SIGSTOP (no error, no reply), SIGCONT after the block."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_stalled_postgres_backend_costs_an_operation_its_deadline(pg_dsn: str) -> None:
    store = PostgresCatalogStore(pg_dsn, timeout=StoreTimeout(connect=2.0, read=1.0))
    store.push([Tool("kept")])
    with stopped(_backend(pg_dsn, "toolmgmt-catalog")):
        took, outcome = elapsed(store.records)
    assert isinstance(outcome, StoreUnavailableError), outcome
    assert "did not answer within 1 s" in str(outcome) and took < 4.0, took
    assert [r.name for r in store.records()] == ["kept"]  # a new connection, a new backend
    store.close()


def test_a_stalled_embedding_cache_is_skipped_within_its_deadline(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    import numpy as np

    cache = PostgresEmbeddingCache(pg_dsn)  # the default deadlines: 2 s each
    cache.put_many("m", {"k": np.ones(4, dtype=np.float32)})
    with stopped(_backend(pg_dsn, "toolmgmt-embeddings")):
        took, found = elapsed(lambda: cache.get_many("m", ["k"]))
    assert found == {} and took < 4.0, (found, took)  # embedded locally meanwhile
    assert "did not answer within 2 s" in caplog.text
    assert set(cache.get_many("m", ["k"])) == {"k"}
    cache.close()


def test_a_follower_whose_listening_backend_stalls_resyncs_by_its_heartbeat(
    store: PostgresCatalogStore, follow: Callable[..., Any], pg_dsn: str
) -> None:
    catalog = ToolCatalog()
    follower = follow(catalog, heartbeat=0.5, retry_initial=0.05)
    store.push([Tool("before")])
    deadline = time.monotonic() + 15
    while "before" not in catalog and time.monotonic() < deadline:
        time.sleep(0.01)
    with stopped(_backend(pg_dsn, "toolmgmt-catalog-follower")):
        store.push([Tool("while_stalled", "Pushed while the follower's backend is stopped.")])
        took, _ = elapsed(
            lambda: _until(lambda: "while_stalled" in catalog and follower.connected, 15)
        )
    assert "while_stalled" in catalog, "the stalled backend was never noticed"
    assert follower.resyncs == 2 and took < 10, took  # heartbeat + deadline + a reconnection
    assert follower.last_error  # the connection was dropped and replaced


def _until(condition: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False
