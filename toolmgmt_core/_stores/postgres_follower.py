"""Keeping an in-memory catalog in step with the PostgreSQL catalog store.

:class:`CatalogFollower` (one per replica, made by
:meth:`~toolmgmt_core._stores.postgres.PostgresCatalogStore.follow`) LISTENs on
:data:`~toolmgmt_core._stores.postgres_db.CHANNEL` and applies each change to its
:class:`~toolmgmt_core.ToolCatalog` when it becomes visible. A follower that loses its
connection keeps its catalog as it is (the replica goes on serving the last catalog it had),
reconnects with backoff and then resynchronises fully; one whose listening backend stalls
(no error, no notification) is noticed by a heartbeat query with a deadline and handled alike.
A row the catalog cannot use (it does not build, ``bind`` refuses it, or it is a look-alike of a
held name) is skipped, logged naming it and counted (:attr:`CatalogFollower.skipped`): it never
stops the follower. Reading rows into tools
(:func:`build_tools`) and making a catalog hold exactly them (:func:`mirror_catalog`) are shared
with the store's ``load_into``.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from toolmgmt_core._catalog.tool_catalog import IngestReport, ToolCatalog
from toolmgmt_core._model.errors import CatalogError, StoreError
from toolmgmt_core._model.schema import tool_from_dict
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._runtime.threads import start_thread
from toolmgmt_core._stores.base import StoreTimeout
from toolmgmt_core._stores.postgres_db import (
    CHANNEL,
    TOOLS_SCHEMA,
    TOOLS_TABLE,
    Database,
    connection_problem,
    cut_after,
    first_line,
    psycopg,
)
from toolmgmt_core._stores.postgres_learned import PostgresLearnedStore, read_learned

__all__ = [
    "Bind",
    "CatalogFollower",
    "StoredTool",
    "build_tools",
    "mirror_catalog",
    "oldest_first",
    "read_rows",
]

logger = logging.getLogger("toolmgmt.stores")

Bind = Callable[[Tool], Tool]
"""Turns a tool read from the store into the tool a catalog holds (attaching a handler)."""

_SELECT = f"SELECT name, definition, revision, updated_at FROM {TOOLS_TABLE}"


@dataclass(frozen=True)
class StoredTool:
    """One row of the catalog store."""

    name: str
    """The tool's name (the primary key)."""
    definition: dict[str, Any]
    """The complete definition (:func:`~toolmgmt_core._model.schema.tool_to_definition`)."""
    revision: int
    """Increases with every change to any tool of the store; this row's last change."""
    updated_at: datetime
    """When it last changed."""


def build_tools(
    records: Iterable[StoredTool], bind: Bind | None
) -> tuple[list[Tool], IngestReport]:
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
    """Put ``tool`` in ``catalog``; whether it changed anything.

    Raises:
        CatalogError: the catalog refuses it (a look-alike of a tool it holds).
    """
    current = catalog.get(tool.name) if tool.name in catalog else None
    if _same(current, tool):
        return False
    catalog.replace(tool)
    return True


def _refused(name: str, exc: CatalogError, report: IngestReport | None) -> None:
    reason = f"the catalog refuses it: {exc}"
    logger.warning("catalog store: skipped tool %r: %s", name, reason)
    if report is not None:
        report.skipped.append((name, reason))
        if name in report.added:
            report.added.remove(name)


def mirror_catalog(
    catalog: ToolCatalog, tools: Sequence[Tool], report: IngestReport | None = None
) -> int:
    """Make ``catalog`` hold exactly ``tools``; return how many tools changed.

    A tool the catalog refuses (a look-alike of one it holds, which a store written by hand
    or by an older version can hold) is left out with a warning naming it, and reported in
    ``report.skipped``; the others are mirrored all the same.
    """
    wanted = {tool.name for tool in tools}
    changed = 0
    for name in catalog.names():
        if name not in wanted:
            catalog.remove(name)
            changed += 1
    for tool in tools:
        try:
            changed += _put(catalog, tool)
        except CatalogError as exc:
            _refused(tool.name, exc, report)
    return changed


def oldest_first(records: Iterable[StoredTool]) -> list[StoredTool]:
    """Rows in the order they were last written: of two look-alikes, the older one is kept."""
    return sorted(records, key=lambda record: record.revision)


def read_rows(
    conn: psycopg.Connection[Any], where: str = "", params: Sequence[Any] = ()
) -> list[StoredTool]:
    cursor = conn.execute(f"{_SELECT} {where} ORDER BY name", params)
    return [StoredTool(name, data, int(revision), at) for name, data, revision, at in cursor]


class CatalogFollower:
    """Keeps a :class:`~toolmgmt_core.ToolCatalog` in step with a catalog store.

    Made by :meth:`PostgresCatalogStore.follow`. It has its own connection, listening on
    :data:`CHANNEL`; notifications arriving together are applied together (one query for all
    their names). ``close()`` stops it.
    """

    poll_interval = 0.2
    """Seconds between checks for :meth:`close` while waiting for notifications."""
    heartbeat = 5.0
    """Seconds without a notification after which the connection is checked with a query
    (``SELECT 1``): a listening backend that stalled (stopped, hung) sends no notification and
    no error, so only asking notices it."""
    heartbeat_deadline = 2.0
    """Seconds the heartbeat's query may take; past it the connection is dropped, and the
    follower reconnects and resynchronises fully (no change is missed for longer than
    ``heartbeat + heartbeat_deadline`` plus a reconnection)."""

    def __init__(
        self,
        dsn: str,
        catalog: ToolCatalog,
        *,
        bind: Bind | None = None,
        timeout: float | StoreTimeout = 5.0,
        retry_initial: float = 0.2,
        retry_max: float = 5.0,
        heartbeat: float | None = None,
    ) -> None:
        self.catalog = catalog
        """The catalog kept in step."""
        self.bind = bind
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        if heartbeat is not None:
            self.heartbeat = heartbeat
        self.revision = 0
        """The highest store revision applied."""
        self.resyncs = 0
        """Full synchronisations done: 1 at start, one more after each reconnection."""
        self.changes = 0
        """Tools added, replaced or removed in the catalog since the start."""
        self.last_error: str | None = None
        """Why the connection was last lost (None while it never was)."""
        self.skipped: dict[str, str] = {}
        """Rows of the store the catalog does not hold now, by name, with the reason (a row
        that does not build, that ``bind`` refuses, or a look-alike of a held name)."""
        self.skips = 0
        """Times a row was skipped since the start (each resync counts its skipped rows)."""
        self._db = Database(
            dsn, TOOLS_SCHEMA, timeout=timeout, application="toolmgmt-catalog-follower"
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
                f"{first_line(exc)}"
            ) from exc
        self._thread = start_thread("catalog-follower", self._run)
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
            with cut_after(conn, self._db.deadlines.read):
                conn.execute(f"LISTEN {CHANNEL}")
                self._resync(conn)
        except BaseException:
            conn.close()
            raise
        self._connected.set()
        return conn

    def _resync(self, conn: psycopg.Connection[Any]) -> None:
        records = read_rows(conn)
        revision = conn.execute(
            f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {TOOLS_TABLE}_revision"
        ).fetchone()
        tools, report = build_tools(oldest_first(records), self.bind)
        self.changes += mirror_catalog(self.catalog, tools, report)
        self.skipped = dict(report.skipped)
        self.skips += len(report.skipped)
        self.revision = max(self.revision, int(revision[0]) if revision else 0)
        self._reload_learned(conn)
        self.resyncs += 1

    learner: Any = None
    """The catalog whose learning from use this follower keeps in step, when it is not the one
    it mirrors (the gateway serves a merge of the store's tools and the upstreams')."""

    @property
    def follows_learning(self) -> bool:
        """Whether the catalog learns from use into this PostgreSQL store's table (then what
        other replicas learn is applied here too)."""
        options = (self.learner or self.catalog).learning
        return options is not None and isinstance(options.store, PostgresLearnedStore)

    def _reload_learned(self, conn: psycopg.Connection[Any]) -> None:
        if self.follows_learning:
            (self.learner or self.catalog).absorb_learned(read_learned(conn), replace=True)

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
                "catalog store at %s %s (%s); keeping the current catalog of %d tools and retrying",
                self._db.where,
                connection_problem(exc)[0],
                first_line(exc),
                len(self.catalog),
            )
        self.last_error = first_line(exc)
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
                if time.monotonic() - idle_since > self.heartbeat:
                    # a dead or stalled connection shows itself here (cut past the deadline)
                    with cut_after(conn, self.heartbeat_deadline):
                        conn.execute("SELECT 1")
                    idle_since = time.monotonic()
                continue
            batch += conn.notifies(timeout=0)  # whatever else has arrived: one query for all
            with cut_after(conn, self._db.deadlines.read):  # a backend stalling mid-change
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
            if op == "learned-sync":
                self._reload_learned(conn)
                continue
            if op == "learn" and isinstance(message.get("ids"), list):
                if self.follows_learning:
                    ids = [int(i) for i in message["ids"] if isinstance(i, int)]
                    (self.learner or self.catalog).absorb_learned(read_learned(conn, ids))
                continue
            if op in ("upsert", "remove") and isinstance(message.get("name"), str):
                names.append(message["name"])
                self.revision = max(self.revision, revision)
        if not names:
            return
        names = list(dict.fromkeys(names))
        tools, report = build_tools(read_rows(conn, "WHERE name = ANY(%s)", [names]), self.bind)
        present = {tool.name: tool for tool in tools}
        freed = False
        for name in names:
            self.skipped.pop(name, None)
            if name in present:
                try:
                    self.changes += _put(self.catalog, present[name])
                except CatalogError as exc:  # one bad row: skipped, counted, never a stop
                    _refused(name, exc, report)
            elif name in self.catalog:  # removed (or no longer builds): gone here too
                self.catalog.remove(name)
                self.changes += 1
                freed = True
        self.skipped.update(report.skipped)
        self.skips += len(report.skipped)
        if freed and self.skipped:  # a row skipped as a look-alike of this one may fit now
            self._resync(conn)
