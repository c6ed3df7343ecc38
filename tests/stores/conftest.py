"""Fixtures for the store tests: the session's real servers, emptied before each test."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest


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
        for table in ("toolmgmt_tools", "toolmgmt_embeddings"):
            if conn.execute("SELECT to_regclass(%s)", [table]).fetchone()[0]:
                conn.execute(f"TRUNCATE {table}")
    yield postgres_server.dsn


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
