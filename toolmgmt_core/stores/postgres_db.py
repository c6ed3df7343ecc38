"""The PostgreSQL side of the stores (``toolmgmt[postgres]``): the driver, the tables, one
connection shared under a lock and replaced when it breaks.

The catalog store (:mod:`toolmgmt_core.stores.postgres`), its follower
(:mod:`~toolmgmt_core.stores.postgres_follower`) and the embedding cache
(:mod:`~toolmgmt_core.stores.postgres_embeddings`) all reach PostgreSQL through
:class:`Database`; an unreachable server raises
:class:`~toolmgmt_core.StoreUnavailableError` naming it (never its password).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg import conninfo
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        'The PostgreSQL stores need psycopg 3: pip install "toolmgmt[postgres]"'
    ) from exc

from toolmgmt_core.model.errors import ConfigError, StoreError, StoreUnavailableError

__all__ = [
    "CHANNEL",
    "EMBEDDINGS_SCHEMA",
    "EMBEDDINGS_TABLE",
    "LEARNED_TABLE",
    "TOOLS_SCHEMA",
    "TOOLS_TABLE",
    "Database",
    "Jsonb",
    "first_line",
    "psycopg",
    "redact_dsn",
]

TOOLS_TABLE = "toolmgmt_tools"
"""The table of tool definitions."""

LEARNED_TABLE = "toolmgmt_learned"
"""The table of requests learned from use (:mod:`~toolmgmt_core.stores.postgres_learned`)."""

EMBEDDINGS_TABLE = "toolmgmt_embeddings"
"""The table of cached tool vectors."""

CHANNEL = "toolmgmt_catalog"
"""The ``LISTEN``/``NOTIFY`` channel of catalog changes. A payload is small JSON:
``{"op": "upsert" | "remove", "name": ..., "revision": N}``, or ``{"op": "sync", ...}`` (for a
name too long for a payload) asking followers to resynchronise fully; what is learned from use:
``{"op": "learn", "ids": [...]}`` (rows added) or ``{"op": "learned-sync"}`` (reload them)."""

_T = TypeVar("_T")

# Serialises table creation: two replicas starting at once must not both create a table.
_SCHEMA_LOCK = 0x746F6F6C  # "tool"
TOOLS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TOOLS_TABLE} (
    name text PRIMARY KEY,
    definition jsonb NOT NULL,
    revision bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE SEQUENCE IF NOT EXISTS {TOOLS_TABLE}_revision;
CREATE TABLE IF NOT EXISTS {LEARNED_TABLE} (
    id bigserial PRIMARY KEY,
    tool text NOT NULL,
    text text NOT NULL,
    conversation text NOT NULL,
    at double precision NOT NULL,
    source text NOT NULL
);
CREATE INDEX IF NOT EXISTS {LEARNED_TABLE}_tool ON {LEARNED_TABLE} (tool);
"""

EMBEDDINGS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {EMBEDDINGS_TABLE} (
    model text NOT NULL,
    key text NOT NULL,
    dim integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (model, key)
);
"""


def redact_dsn(dsn: str) -> str:
    """``dsn`` without its password, as ``postgresql://user@host:port/dbname``."""
    try:
        parts = conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        return "(an unparseable DSN)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def _check_dsn(dsn: str) -> str:
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError("A PostgreSQL store needs a DSN such as postgresql://user@host/db.")
    try:
        conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise ConfigError(
            f"Not a PostgreSQL DSN ({exc}). Use postgresql://user[:password]@host[:port]/dbname "
            "or 'host=... port=... dbname=... user=...'."
        ) from exc
    return dsn


class Database:
    """One connection, shared under a lock, reconnected when it breaks."""

    def __init__(self, dsn: str, schema: str, *, timeout: float, application: str) -> None:
        self.dsn = _check_dsn(dsn)
        self.where = redact_dsn(dsn)
        self.schema = schema
        self.timeout = timeout
        self.application = application
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None

    def connect(self) -> psycopg.Connection[Any]:
        """A new autocommit connection with the tables created (not shared)."""
        conn = psycopg.connect(
            self.dsn,
            autocommit=True,
            connect_timeout=max(1, round(self.timeout)),
            application_name=self.application,
            # Notice a peer that vanished without closing (a cut network) within ~20 s.
            keepalives=1,
            keepalives_idle=10,
            keepalives_interval=5,
            keepalives_count=2,
        )
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
                conn.execute(self.schema)
        except BaseException:
            conn.close()
            raise
        return conn

    def unavailable(self, action: str, exc: Exception) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"Cannot {action}: PostgreSQL at {self.where} is unreachable ({first_line(exc)}). "
            "Check that the server is running and reachable from this machine, and the DSN's "
            "host, port, database, user and password."
        )

    def run(self, action: str, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """``work(connection)`` on the shared connection, in a transaction.

        A connection that broke since its last use (a restarted server) is replaced and the
        work retried once: it runs in one transaction, so it happened whole or not at all.

        Raises:
            StoreUnavailableError: the server cannot be reached.
            StoreError: the server refused the work.
        """
        with self._lock:
            for attempt in (1, 2):
                fresh = self._conn is None or self._conn.closed
                try:
                    if fresh:
                        self._conn = self.connect()
                    assert self._conn is not None
                    with self._conn.transaction():
                        return work(self._conn)
                except psycopg.OperationalError as exc:
                    self._drop()
                    if fresh or attempt == 2:
                        raise self.unavailable(action, exc) from exc
                except psycopg.Error as exc:
                    if self._conn is not None and self._conn.broken:
                        self._drop()
                    raise StoreError(
                        f"Cannot {action}: PostgreSQL at {self.where} refused: {first_line(exc)}"
                    ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def close(self) -> None:
        with self._lock:
            self._drop()


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
