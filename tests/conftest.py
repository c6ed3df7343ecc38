"""Shared fixtures."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

# Never let litellm fetch its price map during tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Token counts come from the files the project can find on a fresh machine (litellm's bundle),
# never from a tiktoken cache that happens to sit in the temporary folder, and tests never
# download: an empty cache folder of their own, and downloading off.
os.environ["TIKTOKEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="toolmgmt-tiktoken-")
os.environ["TOOLMGMT_TIKTOKEN_OFFLINE"] = "1"

# -- real Redis, PostgreSQL and HAProxy (tests/stores, the replicated gateway) -----------------
# One of each per test session, started on first use. A missing binary skips the tests that
# need it, except in CI (TOOLMGMT_REQUIRE_ENGINES=1), where it fails them: CI installs both.


ENGINE_MISSING = "no engine: "
"""How the reason of a test skipped for a missing engine starts (the summary counts them)."""


def _engine_missing(reason: str) -> None:
    if os.environ.get("TOOLMGMT_REQUIRE_ENGINES") == "1":
        pytest.fail(f"{reason} (TOOLMGMT_REQUIRE_ENGINES=1: the engines must be installed)")
    pytest.skip(ENGINE_MISSING + reason)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say, at the end of the run, how many tests were skipped for want of an engine, and why:
    a store test that did not run must not look like one that passed."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        _, found, reason = str(text).partition(ENGINE_MISSING)
        if found:
            reasons[reason] = reasons.get(reason, 0) + 1
    if not reasons:
        return
    total = sum(reasons.values())
    terminalreporter.write_sep(
        "=", f"{total} tests skipped: Redis, PostgreSQL or HAProxy missing", yellow=True
    )
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{count:5d} skipped: {reason}")
    terminalreporter.write_line(
        "Install them (Debian, as root: apt-get install -y redis-server postgresql haproxy), "
        "or set TOOLMGMT_REQUIRE_ENGINES=1 to make these tests fail instead of skipping."
    )


def _local_engine(kind: str) -> Iterator[Any]:
    import toolmgmt_deploy as local

    from toolmgmt_core._model.errors import StoreUnavailableError

    finder = local.find_redis_server if kind == "redis" else local.find_postgres_bindir
    if finder() is None:
        _engine_missing(
            "redis-server is not installed (apt-get install redis-server)"
            if kind == "redis"
            else "PostgreSQL is not installed (apt-get install postgresql)"
        )
    try:
        server = local.LocalRedis() if kind == "redis" else local.LocalPostgres()
    except StoreUnavailableError as exc:  # e.g. root without a postgres user
        _engine_missing(str(exc))
    with server:
        yield server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Any]:
    """A real redis-server on 127.0.0.1 (a ``LocalRedis``: ``.url``), for the whole session."""
    yield from _local_engine("redis")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A real PostgreSQL on 127.0.0.1 (a ``LocalPostgres``: ``.dsn``), for the whole session."""
    yield from _local_engine("postgres")


@pytest.fixture
def redis_url(redis_server: Any) -> Iterator[str]:
    """The URL of the session's redis-server, with its database emptied."""
    redis = pytest.importorskip("redis")
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    yield redis_server.url


@pytest.fixture
def pg_dsn(postgres_server: Any) -> Iterator[str]:
    """The DSN of the session's PostgreSQL, with toolmgmt's tables emptied."""
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        tables = ("toolmgmt_tools", "toolmgmt_embeddings", "toolmgmt_learned", "toolmgmt_events")
        for table in tables:
            if conn.execute("SELECT to_regclass(%s)", [table]).fetchone()[0]:
                conn.execute(f"TRUNCATE {table}")
    yield postgres_server.dsn


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    from toolmgmt_deploy import free_port

    return free_port()


@pytest.fixture(scope="session")
def prometheus_binary() -> str:
    """The ``prometheus`` binary (the test that has it scrape a gateway replica)."""
    from toolmgmt_deploy import find_prometheus

    found = find_prometheus()
    if found is None:
        _engine_missing("prometheus is not installed (apt-get install prometheus)")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def haproxy_binary() -> str:
    """The ``haproxy`` binary (for the load-balanced gateway tests)."""
    from toolmgmt_deploy import find_haproxy

    found = find_haproxy()
    if found is None:
        _engine_missing("haproxy is not installed (apt-get install haproxy)")
    assert found is not None
    return found
