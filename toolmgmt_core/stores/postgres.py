"""The catalog and the embedding cache on PostgreSQL, shared by replicas (``toolmgmt[postgres]``).

:class:`PostgresCatalogStore` keeps every tool's complete definition (what
:func:`~toolmgmt_core.schema.tool_to_definition` writes and
:func:`~toolmgmt_core.schema.tool_from_dict` reads) in ``toolmgmt_tools``, one row per tool name
with a revision that increases with every change. Each push or removal sends a ``NOTIFY`` on
:data:`CHANNEL` in the same transaction, so a :class:`CatalogFollower` (one per replica) hears
about a change exactly when it becomes visible, and applies it to its in-memory
:class:`~toolmgmt_core.catalog.ToolCatalog`. Search stays in-process: each replica ranks with its
own BM25 index, rebuilt lazily after a change (PostgreSQL's full-text ranking is not BM25).

:class:`PostgresEmbeddingCache` keeps tool vectors in ``toolmgmt_embeddings``, keyed like the
SQLite :class:`~toolmgmt_core.embeddings.EmbeddingCache`, so every replica embeds each tool text
once between them.

Failure behaviour: an operation on a server that cannot be reached raises
:class:`~toolmgmt_core.errors.StoreUnavailableError` naming it (never its password). A follower
that loses its connection keeps its catalog as it is (the replica goes on serving the last
catalog it had), reconnects with backoff and then resynchronises fully. The embedding cache,
unreachable, is skipped with a warning: vectors are computed locally meanwhile.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

try:
    import psycopg
    from psycopg import conninfo
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        'The PostgreSQL stores need psycopg 3: pip install "toolmgmt[postgres]"'
    ) from exc

from toolmgmt_core.catalog import IngestReport, ToolCatalog
from toolmgmt_core.embeddings.cache import text_key
from toolmgmt_core.errors import CatalogError, ConfigError, StoreError, StoreUnavailableError
from toolmgmt_core.schema import tool_from_dict, tool_to_definition
from toolmgmt_core.tool import Tool

__all__ = [
    "CHANNEL",
    "EMBEDDINGS_TABLE",
    "MAX_DEFINITION_BYTES",
    "TOOLS_TABLE",
    "CatalogFollower",
    "PostgresCatalogStore",
    "PostgresEmbeddingCache",
    "PushReport",
    "StoredTool",
    "redact_dsn",
]

logger = logging.getLogger("toolmgmt.stores")

TOOLS_TABLE = "toolmgmt_tools"
"""The table of tool definitions."""

EMBEDDINGS_TABLE = "toolmgmt_embeddings"
"""The table of cached tool vectors."""

CHANNEL = "toolmgmt_catalog"
"""The ``LISTEN``/``NOTIFY`` channel of catalog changes. A payload is small JSON:
``{"op": "upsert" | "remove", "name": ..., "revision": N}``, or ``{"op": "sync", ...}`` (for a
name too long for a payload) asking followers to resynchronise fully."""

MAX_DEFINITION_BYTES = 1 << 20
"""Largest tool definition (JSON) a push accepts: 1 MiB."""

Bind = Callable[[Tool], Tool]
"""Turns a tool read from the store into the tool a catalog holds (attaching a handler)."""

_T = TypeVar("_T")

# Serialises table creation: two replicas starting at once must not both create a table.
_SCHEMA_LOCK = 0x746F6F6C  # "tool"
_NAME_IN_PAYLOAD = 7000  # bytes; PostgreSQL's payload limit is 8000

_TOOLS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TOOLS_TABLE} (
    name text PRIMARY KEY,
    definition jsonb NOT NULL,
    revision bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE SEQUENCE IF NOT EXISTS {TOOLS_TABLE}_revision;
"""

_EMBEDDINGS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {EMBEDDINGS_TABLE} (
    model text NOT NULL,
    key text NOT NULL,
    dim integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (model, key)
);
"""

# One statement per changed tool: the upsert and its notification, in the push's transaction.
_UPSERT = f"""
WITH up AS (
    INSERT INTO {TOOLS_TABLE} AS t (name, definition, revision, updated_at)
    VALUES (%(name)s, %(definition)s, nextval('{TOOLS_TABLE}_revision'), now())
    ON CONFLICT (name) DO UPDATE
        SET definition = EXCLUDED.definition, revision = EXCLUDED.revision, updated_at = now()
    RETURNING t.name, t.revision
)
SELECT pg_notify('{CHANNEL}', CASE WHEN octet_length(name) > {_NAME_IN_PAYLOAD}
    THEN json_build_object('op', 'sync', 'revision', revision)::text
    ELSE json_build_object('op', 'upsert', 'name', name, 'revision', revision)::text END)
FROM up
"""

_REMOVE = f"""
WITH gone AS (
    DELETE FROM {TOOLS_TABLE} WHERE name = ANY(%s) RETURNING name
), numbered AS (
    SELECT name, nextval('{TOOLS_TABLE}_revision') AS revision FROM gone
)
SELECT name, pg_notify('{CHANNEL}', CASE WHEN octet_length(name) > {_NAME_IN_PAYLOAD}
    THEN json_build_object('op', 'sync', 'revision', revision)::text
    ELSE json_build_object('op', 'remove', 'name', name, 'revision', revision)::text END)
FROM numbered
"""

_SELECT = f"SELECT name, definition, revision, updated_at FROM {TOOLS_TABLE}"


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


class _Database:
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
            f"Cannot {action}: PostgreSQL at {self.where} is unreachable ({_first_line(exc)}). "
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
                        f"Cannot {action}: PostgreSQL at {self.where} refused: {_first_line(exc)}"
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


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


@dataclass(frozen=True)
class StoredTool:
    """One row of the catalog store."""

    name: str
    """The tool's name (the primary key)."""
    definition: dict[str, Any]
    """The complete definition (:func:`~toolmgmt_core.schema.tool_to_definition`)."""
    revision: int
    """Increases with every change to any tool of the store; this row's last change."""
    updated_at: datetime
    """When it last changed."""


@dataclass
class PushReport(IngestReport):
    """What a push stored: ``added`` (new names), ``updated``, ``unchanged``, ``skipped``."""

    updated: list[str] = field(default_factory=list)
    """Names whose stored definition changed."""
    unchanged: list[str] = field(default_factory=list)
    """Names already stored with exactly this definition (nothing written, nothing sent)."""

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.unchanged)


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_contains_nul(v) for v in value)
    return False


def _checked_definition(item: Mapping[str, Any] | Tool) -> tuple[str, dict[str, Any]]:
    """The canonical definition of a pushed item, validated as the core reads it back.

    Raises:
        CatalogError: not a valid tool, not plain JSON, too large, or holding a NUL character.
    """
    tool = item if isinstance(item, Tool) else tool_from_dict(item)
    definition = tool_to_definition(tool)
    try:
        text = json.dumps(definition, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CatalogError(f"Tool {tool.name!r} is not plain JSON: {exc}.") from exc
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DEFINITION_BYTES:
        raise CatalogError(
            f"Tool {tool.name!r}: its definition is over {MAX_DEFINITION_BYTES:,} bytes of JSON."
        )
    if _contains_nul(definition):  # PostgreSQL's jsonb cannot hold U+0000
        raise CatalogError(f"Tool {tool.name!r} holds a NUL character (U+0000); remove it.")
    tool_from_dict(json.loads(text))  # what a replica will read back must build
    return tool.name, json.loads(text)


def _label(position: int, item: Any) -> str:
    if isinstance(item, Tool):
        return item.name
    if isinstance(item, Mapping):
        body = item["function"] if isinstance(item.get("function"), Mapping) else item
        name = body.get("name")
        if isinstance(name, str) and name:
            return name
    return f"#{position}"


def _build(records: Iterable[StoredTool], bind: Bind | None) -> tuple[list[Tool], IngestReport]:
    """Tools from store rows; a row that does not build (or that ``bind`` refuses) is skipped."""
    tools: list[Tool] = []
    report = IngestReport()
    for record in records:
        try:
            named = record.definition.get("name")
            if named != record.name:
                raise CatalogError(f"the row's definition is named {named!r}")
            tool = tool_from_dict(record.definition)
            if bind is not None:
                tool = bind(tool)
                if not isinstance(tool, Tool):
                    raise CatalogError(f"bind returned {type(tool).__name__}, not a Tool")
        except Exception as exc:  # one bad row (or a bind failing on it) must not stop the rest
            reason = str(exc) if isinstance(exc, CatalogError) else f"{type(exc).__name__}: {exc}"
            logger.warning("catalog store: skipped tool %r: %s", record.name, reason)
            report.skipped.append((record.name, reason))
            continue
        tools.append(tool)
        report.added.append(tool.name)
    return tools, report


def _same(current: Tool | None, tool: Tool) -> bool:
    # Tool equality leaves out the handler and metadata; a bind may have changed those.
    return (
        current is not None
        and current == tool
        and current.handler == tool.handler
        and current.metadata == tool.metadata
    )


def _put(catalog: ToolCatalog, tool: Tool) -> bool:
    current = catalog.get(tool.name) if tool.name in catalog else None
    if _same(current, tool):
        return False
    catalog.replace(tool)
    return True


def _mirror(catalog: ToolCatalog, tools: Sequence[Tool]) -> int:
    """Make ``catalog`` hold exactly ``tools``; return how many tools changed."""
    wanted = {tool.name for tool in tools}
    changed = 0
    for name in catalog.names():
        if name not in wanted:
            catalog.remove(name)
            changed += 1
    for tool in tools:
        changed += _put(catalog, tool)
    return changed


def _rows(
    conn: psycopg.Connection[Any], where: str = "", params: Sequence[Any] = ()
) -> list[StoredTool]:
    cursor = conn.execute(f"{_SELECT} {where} ORDER BY name", params)
    return [StoredTool(name, data, int(revision), at) for name, data, revision, at in cursor]


class PostgresCatalogStore:
    """Tool definitions in PostgreSQL: push, remove, list, load into a catalog, follow changes.

    Tables are created when missing, on first use. Thread-safe (one connection, used under a
    lock; a follower has its own).

    Usage::

        store = PostgresCatalogStore("postgresql://toolmgmt@db/toolmgmt")
        store.push(json.load(open("tools.json")))       # or Tools; bad ones skipped, reported
        catalog = ToolCatalog()
        follower = store.follow(catalog, bind=attach_handler)   # every replica
        ...
        follower.close()
    """

    def __init__(self, dsn: str, *, timeout: float = 5.0) -> None:
        """
        Args:
            dsn: ``postgresql://user[:password]@host[:port]/dbname`` or a key=value string.
            timeout: seconds to wait for a connection.

        Raises:
            ConfigError: ``dsn`` cannot be parsed.
        """
        self._db = _Database(dsn, _TOOLS_SCHEMA, timeout=timeout, application="toolmgmt-catalog")
        self.dsn = dsn
        self.where = self._db.where
        """The server, for messages (without the password)."""

    def __repr__(self) -> str:
        return f"PostgresCatalogStore({self.where!r})"

    def push(self, definitions: Iterable[Mapping[str, Any] | Tool]) -> PushReport:
        """Add or replace tools from definitions (any shape the catalog accepts) or Tools.

        Each definition is validated through :func:`~toolmgmt_core.schema.tool_from_dict`; a
        bad one (or a second one of the same name) is skipped and reported, never the whole
        batch. The valid ones are written in one transaction, with one notification per
        changed tool, so followers see the whole push at once. A definition identical to the
        stored one writes nothing.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was written).
        """
        report = PushReport()
        pending: dict[str, dict[str, Any]] = {}
        for position, item in enumerate(definitions, start=1):
            label = _label(position, item)
            try:
                name, definition = _checked_definition(item)
                if name in pending:
                    raise CatalogError(f"the name {name!r} is already used by an earlier one")
            except CatalogError as exc:
                report.skipped.append((label, str(exc)))
                continue
            except Exception as exc:  # untrusted input that trips a field's conversion
                report.skipped.append((label, f"{type(exc).__name__}: {exc}"))
                continue
            pending[name] = definition
        if not pending:
            return report

        def write(conn: psycopg.Connection[Any]) -> None:
            # run again if the first attempt met a broken connection: count afresh
            report.added, report.updated, report.unchanged = [], [], []
            stored = {
                name: definition
                for name, definition in conn.execute(
                    f"SELECT name, definition FROM {TOOLS_TABLE} WHERE name = ANY(%s) FOR UPDATE",
                    [list(pending)],
                )
            }
            changed = []
            for name, definition in pending.items():
                if name not in stored:
                    report.added.append(name)
                elif stored[name] != definition:
                    report.updated.append(name)
                else:
                    report.unchanged.append(name)
                    continue
                changed.append({"name": name, "definition": Jsonb(definition)})
            if changed:
                with conn.cursor() as cursor:
                    cursor.executemany(_UPSERT, changed)

        self._db.run(f"push {len(pending)} tools", write)
        return report

    def remove(self, names: Iterable[str]) -> list[str]:
        """Remove tools by name; return the names that were stored (unknown names are ignored).

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was removed).
        """
        wanted = [name for name in dict.fromkeys(names) if isinstance(name, str)]
        if not wanted:
            return []
        removed = self._db.run(
            f"remove {len(wanted)} tools",
            lambda conn: [row[0] for row in conn.execute(_REMOVE, [wanted])],
        )
        return sorted(removed)

    def records(self) -> list[StoredTool]:
        """Every stored row, by name.

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        return self._db.run("list the catalog", _rows)

    def tools(self, *, bind: Bind | None = None) -> list[Tool]:
        """Every stored tool, by name (a row that does not build is skipped, with a warning).

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        return _build(self.records(), bind)[0]

    def load_into(self, catalog: ToolCatalog, bind: Bind | None = None) -> IngestReport:
        """Replace ``catalog``'s contents with the store's.

        Args:
            catalog: the catalog to fill; tools not in the store are removed from it, unchanged
                tools are left in place (so its search index is rebuilt only if something
                changed).
            bind: ``bind(tool) -> Tool`` run on every tool read, e.g. to attach its handler
                (the gateway binds a tool to its upstream by domain).

        Returns:
            ``added``: every name now in the catalog; ``skipped``: rows that did not build
            or that ``bind`` refused, with the reason.

        Raises:
            StoreUnavailableError: the server cannot be reached (the catalog is unchanged).
        """
        tools, report = _build(self.records(), bind)
        _mirror(catalog, tools)
        return report

    def follow(
        self,
        catalog: ToolCatalog,
        *,
        bind: Bind | None = None,
        retry_initial: float = 0.2,
        retry_max: float = 5.0,
    ) -> CatalogFollower:
        """Load the store into ``catalog``, then keep it in step in a background thread.

        The catalog mirrors the store: tools not in the store are removed from it. Every push
        or removal reaches the catalog within milliseconds (it LISTENs for the store's
        notifications). When the connection is lost, the catalog stays as it is, the
        follower reconnects with backoff (``retry_initial`` doubling up to ``retry_max``
        seconds, jittered) and then resynchronises fully.

        Raises:
            StoreUnavailableError: the first load failed (nothing was started).
        """
        follower = CatalogFollower(
            self._db.dsn,
            catalog,
            bind=bind,
            timeout=self._db.timeout,
            retry_initial=retry_initial,
            retry_max=retry_max,
        )
        follower.start()
        return follower

    def close(self) -> None:
        """Close the connection (the store reconnects if used again)."""
        self._db.close()

    def __enter__(self) -> PostgresCatalogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CatalogFollower:
    """Keeps a :class:`~toolmgmt_core.catalog.ToolCatalog` in step with a catalog store.

    Made by :meth:`PostgresCatalogStore.follow`. It has its own connection, listening on
    :data:`CHANNEL`; notifications arriving together are applied together (one query for all
    their names). ``close()`` stops it.
    """

    poll_interval = 0.2
    """Seconds between checks for :meth:`close` while waiting for notifications."""
    idle_check = 10.0
    """Seconds without a notification after which the connection is checked with a query."""

    def __init__(
        self,
        dsn: str,
        catalog: ToolCatalog,
        *,
        bind: Bind | None = None,
        timeout: float = 5.0,
        retry_initial: float = 0.2,
        retry_max: float = 5.0,
    ) -> None:
        self.catalog = catalog
        """The catalog kept in step."""
        self.bind = bind
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.revision = 0
        """The highest store revision applied."""
        self.resyncs = 0
        """Full synchronisations done: 1 at start, one more after each reconnection."""
        self.changes = 0
        """Tools added, replaced or removed in the catalog since the start."""
        self.last_error: str | None = None
        """Why the connection was last lost (None while it never was)."""
        self._db = _Database(
            dsn, _TOOLS_SCHEMA, timeout=timeout, application="toolmgmt-catalog-follower"
        )
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        state = "connected" if self.connected else "disconnected"
        return f"<CatalogFollower {self._db.where} {state} revision={self.revision}>"

    @property
    def connected(self) -> bool:
        """Whether it is listening now (False while the store is unreachable)."""
        return self._connected.is_set()

    def start(self) -> CatalogFollower:
        """Connect, LISTEN, load the whole store, then follow in a background thread.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was started).
        """
        if self._thread is not None:
            return self
        try:
            self._conn = self._listen()
        except psycopg.OperationalError as exc:
            raise self._db.unavailable("follow the catalog", exc) from exc
        except psycopg.Error as exc:
            raise StoreError(
                f"Cannot follow the catalog: PostgreSQL at {self._db.where} refused: "
                f"{_first_line(exc)}"
            ) from exc
        self._thread = threading.Thread(
            target=self._run, name="toolmgmt-catalog-follower", daemon=True
        )
        self._thread.start()
        return self

    def wait_connected(self, timeout: float | None = None) -> bool:
        """Wait until it is listening; return whether it is."""
        return self._connected.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop following (the catalog keeps what it has)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():  # else the thread closes it as it ends
            self._drop()

    def __enter__(self) -> CatalogFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the thread -------------------------------------------------------------------------

    def _listen(self) -> psycopg.Connection[Any]:
        """A connection that LISTENs, then a full resync (so no change falls in between)."""
        conn = self._db.connect()
        try:
            conn.execute(f"LISTEN {CHANNEL}")
            self._resync(conn)
        except BaseException:
            conn.close()
            raise
        self._connected.set()
        return conn

    def _resync(self, conn: psycopg.Connection[Any]) -> None:
        records = _rows(conn)
        revision = conn.execute(
            f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {TOOLS_TABLE}_revision"
        ).fetchone()
        tools, _ = _build(records, self.bind)
        self.changes += _mirror(self.catalog, tools)
        self.revision = max(self.revision, int(revision[0]) if revision else 0)
        self.resyncs += 1

    def _run(self) -> None:
        delay = self.retry_initial
        try:
            while not self._stop.is_set():
                if self._conn is None:
                    try:
                        self._conn = self._listen()
                    except Exception as exc:  # down, or refusing: keep the catalog, retry
                        self._lost(exc)
                        self._stop.wait(random.uniform(delay / 2, delay))
                        delay = min(delay * 2, self.retry_max)
                        continue
                    delay = self.retry_initial
                    logger.warning(
                        "catalog store at %s is reachable again; resynchronised (%d tools)",
                        self._db.where,
                        len(self.catalog),
                    )
                try:
                    self._follow(self._conn)
                except psycopg.Error as exc:
                    self._lost(exc)
                except Exception:  # a bug must not silently stop following: log it, resync
                    logger.exception("catalog follower: failed to apply a change; resyncing")
                    self._drop()
                    self._stop.wait(self.retry_initial)
        finally:
            self._drop()

    def _lost(self, exc: Exception) -> None:
        if self._connected.is_set() or self.last_error is None:
            logger.warning(
                "catalog store at %s is unreachable (%s); keeping the current catalog of %d "
                "tools and retrying",
                self._db.where,
                _first_line(exc),
                len(self.catalog),
            )
        self.last_error = _first_line(exc)
        self._drop()

    def _drop(self) -> None:
        self._connected.clear()
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def _follow(self, conn: psycopg.Connection[Any]) -> None:
        """Wait for notifications until stopped; apply each batch."""
        idle_since = time.monotonic()
        while not self._stop.is_set():
            batch = list(conn.notifies(timeout=self.poll_interval, stop_after=1))
            if not batch:
                if time.monotonic() - idle_since > self.idle_check:
                    conn.execute("SELECT 1")  # a dead connection shows itself here
                    idle_since = time.monotonic()
                continue
            batch += conn.notifies(timeout=0)  # whatever else has arrived: one query for all
            self._apply(conn, [n.payload for n in batch])
            idle_since = time.monotonic()

    def _apply(self, conn: psycopg.Connection[Any], payloads: Sequence[str]) -> None:
        names: list[str] = []
        for payload in payloads:
            try:
                message = json.loads(payload)
                op, revision = message["op"], int(message.get("revision", 0))
            except (ValueError, KeyError, TypeError):
                logger.warning("catalog follower: ignored a malformed notification %.200r", payload)
                continue
            if op == "sync":
                self._resync(conn)
                return
            if op in ("upsert", "remove") and isinstance(message.get("name"), str):
                names.append(message["name"])
                self.revision = max(self.revision, revision)
        if not names:
            return
        names = list(dict.fromkeys(names))
        tools, _ = _build(_rows(conn, "WHERE name = ANY(%s)", [names]), self.bind)
        present = {tool.name: tool for tool in tools}
        for name in names:
            if name in present:
                self.changes += _put(self.catalog, present[name])
            elif name in self.catalog:  # removed (or no longer builds): gone here too
                self.catalog.remove(name)
                self.changes += 1


class PostgresEmbeddingCache:
    """Tool vectors in PostgreSQL, shared by every replica; the interface of
    :class:`~toolmgmt_core.embeddings.EmbeddingCache`.

    Usage::

        catalog = ToolCatalog(tools, embedder=embedder,
                              embedding_cache=PostgresEmbeddingCache(dsn))

    Unreachable, it is skipped with a warning (once per outage): ``get_many`` finds nothing
    and ``put_many`` keeps nothing, so search embeds locally and goes on.
    """

    key = staticmethod(text_key)
    """The cache key of a text (:func:`~toolmgmt_core.embeddings.cache.text_key`)."""

    def __init__(self, dsn: str, *, timeout: float = 5.0) -> None:
        """
        Args:
            dsn: as :class:`PostgresCatalogStore`.
            timeout: seconds to wait for a connection.
        """
        self._db = _Database(
            dsn, _EMBEDDINGS_SCHEMA, timeout=timeout, application="toolmgmt-embeddings"
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
