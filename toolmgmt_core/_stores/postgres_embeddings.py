"""Tool vectors in PostgreSQL, shared by every replica (``toolmgmt[postgres]``).

:class:`PostgresEmbeddingCache` keeps them in ``toolmgmt_embeddings``, keyed like the SQLite
:class:`~toolmgmt_core._embeddings.EmbeddingCache`, so every replica embeds each tool text once
between them. Unreachable, it is skipped with a warning: vectors are computed locally meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from toolmgmt_core._embeddings.cache import text_key
from toolmgmt_core._model.errors import StoreUnavailableError
from toolmgmt_core._stores.base import StoreTimeout
from toolmgmt_core._stores.postgres_db import EMBEDDINGS_SCHEMA, EMBEDDINGS_TABLE, Database, psycopg

__all__ = [
    "PostgresEmbeddingCache",
]

logger = logging.getLogger("toolmgmt.stores")


class PostgresEmbeddingCache:
    """Tool vectors in PostgreSQL, shared by every replica; the interface of
    :class:`~toolmgmt_core._embeddings.EmbeddingCache`.

    Usage::

        catalog = ToolCatalog(tools, embedder=embedder,
                              embedding_cache=PostgresEmbeddingCache(dsn))

    Unreachable, it is skipped with a warning (once per outage): ``get_many`` finds nothing
    and ``put_many`` keeps nothing, so search embeds locally and goes on.
    """

    key = staticmethod(text_key)
    """The cache key of a text (:func:`~toolmgmt_core._embeddings.cache.text_key`)."""

    def __init__(self, dsn: str, *, timeout: float | StoreTimeout = StoreTimeout()) -> None:
        """
        Args:
            dsn: as :class:`PostgresCatalogStore`.
            timeout: seconds to wait for a connection and for each read or write (a number:
                both; default 2 s each): a search waits on it when the catalog changed, so a
                slow server is skipped like an unreachable one.
        """
        self._db = Database(
            dsn, EMBEDDINGS_SCHEMA, timeout=timeout, application="toolmgmt-embeddings"
        )
        self.where = self._db.where
        self._down = False

    def __repr__(self) -> str:
        return f"PostgresEmbeddingCache({self.where!r})"

    @contextmanager
    def _degraded(self) -> Iterator[None]:
        try:
            yield
        except StoreUnavailableError as exc:
            if not self._down:
                logger.warning("%s; embedding locally until it is back", exc)
            self._down = True
        else:
            self._down = False

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (none while the server is unreachable)."""
        found: dict[str, np.ndarray] = {}
        if not keys:
            return found

        def read(conn: psycopg.Connection[Any]) -> None:
            rows = conn.execute(
                f"SELECT key, dim, data FROM {EMBEDDINGS_TABLE} WHERE model = %s AND key = ANY(%s)",
                [model_id, list(keys)],
            )
            for key, dim, data in rows:
                vector = np.frombuffer(bytes(data), dtype=np.float32)
                if vector.shape == (dim,):
                    found[key] = vector

        with self._degraded():
            self._db.run("read cached embeddings", read)
        return found

    def put_many(self, model_id: str, items: dict[str, np.ndarray]) -> None:
        """Store vectors in one transaction (nothing while the server is unreachable)."""
        rows = [
            (model_id, key, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
            for key, vec in items.items()
        ]
        if not rows:
            return

        def write(conn: psycopg.Connection[Any]) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {EMBEDDINGS_TABLE} (model, key, dim, data) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (model, key) DO UPDATE "
                    "SET dim = EXCLUDED.dim, data = EXCLUDED.data",
                    rows,
                )

        with self._degraded():
            self._db.run("write embeddings", write)

    def __len__(self) -> int:
        """How many vectors are stored (all models).

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        row = self._db.run(
            "count embeddings",
            lambda conn: conn.execute(f"SELECT count(*) FROM {EMBEDDINGS_TABLE}").fetchone(),
        )
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the connection (the cache reconnects if used again)."""
        self._db.close()
