"""The store tests' fixtures (``redis_url``, ``pg_dsn``, ``closed_port``) live in
tests/conftest.py: the replicated gateway's tests use them too. Here: a catalog store and its
followers, for the catalog store's tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture
def store(pg_dsn: str) -> Iterator[Any]:
    """A ``PostgresCatalogStore`` on the session's PostgreSQL, emptied."""
    pytest.importorskip("psycopg")
    from toolmgmt_core._stores.postgres import PostgresCatalogStore

    with PostgresCatalogStore(pg_dsn) as made:
        yield made


@pytest.fixture
def follow(store: Any) -> Iterator[Callable[..., Any]]:
    """Start followers (replicas) that are closed after the test."""
    followers: list[Any] = []

    def start(catalog: Any, **options: Any) -> Any:
        follower = store.follow(catalog, **options)
        followers.append(follower)
        return follower

    yield start
    for follower in followers:
        follower.close()
