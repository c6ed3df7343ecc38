"""The PostgreSQL side of the stores (``toolmgmt[postgres]``): the driver, the tables, one
connection shared under a lock and replaced when it breaks.

The catalog store (:mod:`toolmgmt_core._stores.postgres`), its follower
(:mod:`~toolmgmt_core._stores.postgres_follower`) and the embedding cache
(:mod:`~toolmgmt_core._stores.postgres_embeddings`) all reach PostgreSQL through
:class:`Database`; a server that cannot be reached, or that refuses the connection, raises
:class:`~toolmgmt_core.StoreUnavailableError` naming it (never its password) and saying which
(:func:`connection_problem`: a refused login, an unknown database, nothing listening, an unknown
host, no answer in time), so that a wrong password is not reported as a server down.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg import conninfo
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        'The PostgreSQL stores need psycopg 3: pip install "toolmgmt[postgres]"'
    ) from exc

from toolmgmt_core._model.errors import ConfigError, StoreError, StoreUnavailableError
from toolmgmt_core._runtime.threads import call_after
from toolmgmt_core._stores.base import StoreTimeout

__all__ = [
    "CHANNEL",
    "EMBEDDINGS_SCHEMA",
    "EMBEDDINGS_TABLE",
    "LEARNED_TABLE",
    "TOOLS_SCHEMA",
    "TOOLS_TABLE",
    "Database",
    "Jsonb",
    "connection_problem",
    "cut_after",
    "first_line",
    "psycopg",
    "redact_dsn",
]

TOOLS_TABLE = "toolmgmt_tools"
"""The table of tool definitions."""

LEARNED_TABLE = "toolmgmt_learned"
"""The table of requests learned from use (:mod:`~toolmgmt_core._stores.postgres_learned`)."""

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


@contextmanager
def cut_after(conn: psycopg.Connection[Any], seconds: float) -> Iterator[threading.Event]:
    """Shut ``conn``'s socket down if the block is still running after ``seconds``.

    psycopg waits for a reply without a deadline, and a stalled server (a stopped backend, a
    server under a heavy lock) never sends one: cutting the socket makes the wait fail at once
    with an :class:`psycopg.OperationalError` (the connection is then broken, and replaced).
    The event yielded is set when it was cut, so the caller can say why.
    """
    cut = threading.Event()

    def shut() -> None:
        cut.set()
        try:
            # A duplicate of the descriptor shares the socket: shutting it down wakes the wait.
            with socket.socket(fileno=os.dup(conn.fileno())) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except (OSError, psycopg.Error):  # closed meanwhile: nothing left to cut
            pass

    cancel = call_after(seconds, shut)
    try:
        yield cut
    finally:
        cancel()


class Database:
    """One connection, shared under a lock, reconnected when it breaks; each operation within
    its deadlines (:class:`~toolmgmt_core._stores.StoreTimeout`)."""

    def __init__(
        self, dsn: str, schema: str, *, timeout: float | StoreTimeout, application: str
    ) -> None:
        self.dsn = _check_dsn(dsn)
        self.where = redact_dsn(dsn)
        self.schema = schema
        self.deadlines = StoreTimeout.of(timeout)
        self.timeout = self.deadlines.connect
        """Seconds to wait for a connection."""
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
            with cut_after(conn, self.deadlines.read), conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
                conn.execute(self.schema)
        except BaseException:
            conn.close()
            raise
        return conn

    def unavailable(self, action: str, exc: Exception) -> StoreUnavailableError:
        """The error for ``action`` failing on a connection problem, saying which one."""
        what, advice = connection_problem(exc)
        return StoreUnavailableError(
            f"Cannot {action}: PostgreSQL at {self.where} {what} ({_detail(exc)}). {advice}"
        )

    def slow(self, action: str, exc: Exception) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"Cannot {action}: PostgreSQL at {self.where} did not answer within "
            f"{self.deadlines.read:g} s ({first_line(exc)}); it may be overloaded, stopped or "
            "waiting on a lock."
        )

    def run(self, action: str, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """``work(connection)`` on the shared connection, in a transaction, within the read
        deadline (past it the transaction is cut off, so nothing of it was written).

        A connection that broke since its last use (a restarted server) is replaced and the
        work retried once: it runs in one transaction, so it happened whole or not at all.
        Work cut off at its deadline is not retried.

        Raises:
            StoreUnavailableError: the server cannot be reached, or did not answer in time.
            StoreError: the server refused the work.
        """
        with self._lock:
            for attempt in (1, 2):
                fresh = self._conn is None or self._conn.closed
                cut: threading.Event | None = None
                try:
                    if fresh:
                        self._conn = self.connect()
                    assert self._conn is not None
                    with cut_after(self._conn, self.deadlines.read) as cut:
                        with self._conn.transaction():
                            return work(self._conn)
                except psycopg.OperationalError as exc:
                    self._drop()
                    if cut is not None and cut.is_set():
                        raise self.slow(action, exc) from exc
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


def _detail(exc: BaseException) -> str:
    """The server's or libpq's own words, without psycopg's ``connection failed:`` preamble."""
    text = re.sub(r"^connection failed: ", "", first_line(exc))
    text = re.sub(r'^connection to server at "[^"]*"(?: \([^)]*\))?, port \d+ failed: ', "", text)
    return re.sub(r"\s+", " ", text)


# libpq and the server say what went wrong in words only (a failed connection has no SQLSTATE in
# psycopg); these are the English messages, in the order they are checked. Anything else is
# reported as unreachable.
_PROBLEMS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(
            r"password authentication failed|authentication failed|no password supplied"
            r"|no pg_hba\.conf entry|role \"[^\"]*\" does not exist|SCRAM|GSSAPI|certificate",
            re.I,
        ),
        "refused the login",
        "The server answers but does not accept these credentials: check the DSN's user and "
        "password, and that the server's pg_hba.conf lets this user in from this host.",
    ),
    (
        re.compile(r"database \"[^\"]*\" does not exist", re.I),
        "has no such database",
        "The server answers but holds no database of that name: create it (createdb -O USER "
        "NAME) or fix the DSN's database name.",
    ),
    (
        re.compile(r"connection refused", re.I),
        "refused the connection: nothing listens there",
        "Check that PostgreSQL is running, and the DSN's host and port (and the server's "
        "listen_addresses and port).",
    ),
    (
        re.compile(r"could not translate host name|failed to resolve host|name or service", re.I),
        "names a host that cannot be resolved",
        "Check the DSN's host name.",
    ),
    (
        re.compile(r"timeout expired|timed out", re.I),
        "did not answer in time",
        "Check that the host is reachable from this machine (a firewall may drop the "
        "connection) and that the server is not overloaded.",
    ),
    (
        re.compile(r"too many clients|the database system is (starting up|shutting down)", re.I),
        "is not accepting connections now",
        "The server answers but turns connections away for now; it is retried.",
    ),
)


def connection_problem(exc: BaseException) -> tuple[str, str]:
    """What a failed connection or query means, as ``(what happened, what to check)``.

    ``what`` follows the server's address in a sentence ("PostgreSQL at ... refused the login");
    ``advice`` is a sentence of its own.
    """
    text = str(exc)
    for pattern, what, advice in _PROBLEMS:
        if pattern.search(text):
            return what, advice
    return (
        "is unreachable",
        "Check that the server is running and reachable from this machine, and the DSN's "
        "host, port, database, user and password.",
    )
