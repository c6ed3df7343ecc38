"""What replicas learned from use, shared through PostgreSQL (``toolmgmt[postgres]``).

:class:`PostgresLearnedStore` keeps learned requests in ``toolmgmt_learned``, one row each (the
audit trail: tool, the request's terms (clear or keyed digests), principal and conversation
digests, when, source; the key of the digests is never in the database: every replica is given
it, :attr:`~toolmgmt_core._learning.teaching.LearningOptions.key`).
Each addition sends a
``NOTIFY`` on the catalog's channel in the same transaction (``{"op": "learn", "ids": [...]}``),
each ``forget`` one asking followers to reload what is learned (``{"op": "learned-sync"}``), so
a replica's :class:`~toolmgmt_core._stores.postgres_follower.CatalogFollower` applies another
replica's lessons within milliseconds, as it applies tool changes.

Usage (every replica)::

    store = PostgresCatalogStore(dsn)
    catalog = ToolCatalog(learning=LearningOptions(
        store=PostgresLearnedStore(dsn), key=os.environ["LEARNING_KEY"]))
    follower = store.follow(catalog)       # tools and what is learned
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any

from toolmgmt_core._learning.requests import LearnedRequest
from toolmgmt_core._learning.store import forget_filter
from toolmgmt_core._stores.postgres_db import (
    CHANNEL,
    LEARNED_TABLE,
    TOOLS_SCHEMA,
    Database,
    psycopg,
)

__all__ = ["LEARNED_SCHEMA", "PostgresLearnedStore", "read_learned"]

_PAYLOAD_IDS = 500
"""At most this many ids in one notification (PostgreSQL's payload limit is 8000 bytes); a
larger batch asks followers to reload."""

_COLUMNS = "id, tool, text, conversation, at, source, principal"

LEARNED_SCHEMA = f"""
ALTER TABLE {LEARNED_TABLE} ADD COLUMN IF NOT EXISTS principal text NOT NULL DEFAULT '';
DROP TABLE IF EXISTS {LEARNED_TABLE}_salt;
"""
"""What learning adds to the catalog's tables: the principal column (rows kept before it have
none: their conversation counts); the salt once kept beside the digests is dropped (a copy of
the database could be read with it)."""


def read_learned(
    conn: psycopg.Connection[Any], ids: Sequence[int] | None = None
) -> list[LearnedRequest]:
    """Learned rows (these ids, or all of them), oldest first."""
    where, params = ("WHERE id = ANY(%s)", [list(ids)]) if ids is not None else ("", [])
    cursor = conn.execute(f"SELECT {_COLUMNS} FROM {LEARNED_TABLE} {where} ORDER BY at, id", params)
    return [
        LearnedRequest(tool, text, conversation, float(at), int(row_id), source, principal)
        for row_id, tool, text, conversation, at, source, principal in cursor
    ]


class PostgresLearnedStore:
    """Learned requests in PostgreSQL, shared by replicas (a
    :class:`~toolmgmt_core._learning.store.LearnedStore`). Thread-safe."""

    def __init__(self, dsn: str, *, timeout: float = 5.0) -> None:
        """
        Args:
            dsn: ``postgresql://user[:password]@host[:port]/dbname`` or a key=value string.
            timeout: seconds to wait for a connection.

        Raises:
            ConfigError: ``dsn`` cannot be parsed.
        """
        self._db = Database(
            dsn, TOOLS_SCHEMA + LEARNED_SCHEMA, timeout=timeout, application="toolmgmt-learned"
        )
        self.dsn = dsn
        self.where = self._db.where
        """The server, for messages (without the password)."""

    def __repr__(self) -> str:
        return f"PostgresLearnedStore({self.where!r})"

    def load(self) -> list[LearnedRequest]:
        """Every learned row, oldest first.

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        return self._db.run("read what was learned", read_learned)

    def add(self, requests: Sequence[LearnedRequest]) -> list[LearnedRequest]:
        """Insert ``requests`` and tell the followers, in one transaction.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was written).
        """

        def write(conn: psycopg.Connection[Any]) -> list[LearnedRequest]:
            kept = []
            for r in requests:
                row = conn.execute(
                    f"INSERT INTO {LEARNED_TABLE} "
                    "(tool, text, conversation, at, source, principal) "
                    "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                    [r.tool, r.text, r.conversation, r.at, r.source, r.principal],
                ).fetchone()
                assert row is not None
                kept.append(dataclasses.replace(r, id=int(row[0])))
            ids = [r.id for r in kept]
            message = {"op": "learn", "ids": ids} if len(ids) <= _PAYLOAD_IDS else None
            _notify(conn, message or {"op": "learned-sync"})
            return kept

        if not requests:
            return []
        return self._db.run(f"keep {len(requests)} learned requests", write)

    def discard(self, ids: Iterable[int]) -> None:
        """Drop rows that made room for newer ones (each replica drops them itself)."""
        wanted = [int(i) for i in ids]
        if wanted:
            self._db.run(
                "drop old learned requests",
                lambda conn: conn.execute(
                    f"DELETE FROM {LEARNED_TABLE} WHERE id = ANY(%s)", [wanted]
                ),
            )

    def forget(
        self,
        tool: str | None = None,
        *,
        conversation: str | None = None,
        principal: str | None = None,
    ) -> int:
        """Remove a tool's rows, one conversation's or one principal's (digests) or all;
        followers reload.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was removed).
        """
        where, params = forget_filter(tool, conversation, principal, mark="%s")

        def delete(conn: psycopg.Connection[Any]) -> int:
            count = conn.execute(f"DELETE FROM {LEARNED_TABLE}{where}", params).rowcount
            _notify(conn, {"op": "learned-sync"})
            return count

        return self._db.run("forget what was learned", delete)

    def close(self) -> None:
        """Close the connection (the store reconnects if used again)."""
        self._db.close()

    def __enter__(self) -> PostgresLearnedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _notify(conn: psycopg.Connection[Any], message: dict[str, Any]) -> None:
    conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, json.dumps(message)])
