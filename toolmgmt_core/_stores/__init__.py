"""Where sessions and the catalog live when several processes share them.

The core needs no server: :class:`InMemorySessionStore` is the default. The other stores are
imported from their own modules, each behind its extra::

    from toolmgmt_core._stores.redis import RedisSessionStore          # toolmgmt[redis]
    from toolmgmt_core._stores.postgres import PostgresCatalogStore    # toolmgmt[postgres]

``RedisSessionStore``, ``PostgresCatalogStore``, ``PostgresLearnedStore`` and
``PostgresEmbeddingCache`` can also be imported from here; that imports their driver only when
the name is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from toolmgmt_core._stores.base import (
    DEFAULT_SESSION_TTL,
    MAX_SESSION_ID_LENGTH,
    MAX_STATE_BYTES,
    UPDATE_RETRIES,
    InMemorySessionStore,
    SessionStore,
    StoredSession,
    StoreTimeout,
    call_store,
    check_session_id,
    stored_version,
    update_session,
)

__all__ = [
    "DEFAULT_SESSION_TTL",
    "MAX_SESSION_ID_LENGTH",
    "MAX_STATE_BYTES",
    "UPDATE_RETRIES",
    "CatalogFollower",
    "InMemorySessionStore",
    "PostgresCatalogStore",
    "PostgresEmbeddingCache",
    "PostgresLearnedStore",
    "RedisSessionStore",
    "SessionStore",
    "StoreTimeout",
    "StoredSession",
    "call_store",
    "check_session_id",
    "lazy_attributes",
    "stored_version",
    "update_session",
]

_LAZY = {
    "RedisSessionStore": "toolmgmt_core._stores.redis",
    "PostgresCatalogStore": "toolmgmt_core._stores.postgres",
    "PostgresEmbeddingCache": "toolmgmt_core._stores.postgres_embeddings",
    "CatalogFollower": "toolmgmt_core._stores.postgres_follower",
    "PostgresLearnedStore": "toolmgmt_core._stores.postgres_learned",
}


def lazy_attributes(owner: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``owner`` that imports each name of ``table`` (name ->
    the module holding it) from its module on first use: the drivers are optional, and a
    store's module imports one."""

    def attribute(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return attribute


__getattr__ = lazy_attributes(__name__, _LAZY)
