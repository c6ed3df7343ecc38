"""A usage log in a shared store, written by every replica and read by ``toolmgmt usage
--store DSN``: a Redis stream (``redis://``) or a PostgreSQL table (``postgresql://``).

:class:`StoreListener` is the listener: it turns events into records
(:mod:`toolmgmt_core._events.records`, no argument, result or query text unless told to) and
writes them from a thread of its own in batches, so a call never waits on the store; when the
store is down or slow, records are dropped and counted (:attr:`StoreListener.dropped`,
:attr:`StoreListener.errors`, and the ``toolmgmt.usage_log.dropped`` metric), never queued
without bound. The log keeps at most
``max_records`` records (the oldest go first).

Usage::

    log = StoreListener(open_event_log("redis://localhost:6379/0"))
    manager = ToolManager(catalog, listeners=[log])
    ...                                     # then: toolmgmt usage --store redis://...
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from toolmgmt_core._events.content import ContentCapture
from toolmgmt_core._events.records import event_record, parse_records, record_line
from toolmgmt_core._events.types import Event
from toolmgmt_core._model.errors import ConfigError, StoreError
from toolmgmt_core._runtime.threads import start_thread
from toolmgmt_core._stores.base import StoreTimeout

__all__ = [
    "DEFAULT_EVENTS_KEY",
    "DEFAULT_MAX_RECORDS",
    "DROPPED_METRIC",
    "EVENTS_TABLE",
    "EventLog",
    "PostgresEventLog",
    "RedisEventLog",
    "StoreListener",
    "open_event_log",
]

DEFAULT_EVENTS_KEY = "toolmgmt:events"
"""The Redis stream of the usage log."""

EVENTS_TABLE = "toolmgmt_events"
"""The PostgreSQL table of the usage log."""

DEFAULT_MAX_RECORDS = 1_000_000
"""Records a log keeps at most (the oldest are dropped first)."""

_BATCH = 500
_PAGE = 1000

# Its name says whose the message is (a gateway's log lines are "name: message").
logger = logging.getLogger("toolmgmt.usage_log")

DROPPED_METRIC = "toolmgmt.usage_log.dropped"
"""The counter of usage records dropped (``toolmgmt_usage_log_dropped_total`` in Prometheus
text), from 0."""


class EventLog(Protocol):
    """Where records are kept: append a batch, read them all back in order."""

    def write(self, lines: Sequence[str]) -> None: ...
    def read(self) -> Iterator[dict[str, Any]]: ...
    def close(self) -> None: ...


class RedisEventLog:
    """The log as a Redis stream, trimmed to about ``max_records`` entries (``toolmgmt[redis]``).

    Args:
        url: the Redis URL.
        key: the stream's key.
        max_records: entries kept (approximately: Redis trims whole nodes).
        timeout: seconds to connect and for each reply.
    """

    def __init__(
        self,
        url: str,
        *,
        key: str = DEFAULT_EVENTS_KEY,
        max_records: int = DEFAULT_MAX_RECORDS,
        timeout: float | StoreTimeout = StoreTimeout(),
    ) -> None:
        from toolmgmt_core._stores.redis import RedisSessionStore

        self._store = RedisSessionStore(url, timeout=timeout)  # its client and its errors
        self.key = key
        self.max_records = max_records
        self.where = self._store.url

    def write(self, lines: Sequence[str]) -> None:
        with self._store._errors("write the usage log"):
            pipe = self._store._client.pipeline(transaction=False)
            for line in lines:
                pipe.xadd(self.key, {"r": line}, maxlen=self.max_records, approximate=True)
            pipe.execute()

    def read(self) -> Iterator[dict[str, Any]]:
        start = "-"
        while True:
            with self._store._errors("read the usage log"):
                page: list[Any] = self._store._client.xrange(self.key, min=start, count=_PAGE) or []
            for _, fields in page:
                yield from parse_records([_text(fields.get(b"r") or fields.get("r"))])
            if len(page) < _PAGE:
                return
            start = "(" + _text(page[-1][0])

    def close(self) -> None:
        self._store.close()


class PostgresEventLog:
    """The log as a PostgreSQL table, trimmed to ``max_records`` rows (``toolmgmt[postgres]``).

    Args:
        dsn: the PostgreSQL DSN.
        max_records: rows kept (the oldest are deleted as new ones come).
        timeout: seconds to connect and for each statement.
    """

    def __init__(
        self,
        dsn: str,
        *,
        max_records: int = DEFAULT_MAX_RECORDS,
        timeout: float | StoreTimeout = StoreTimeout(),
    ) -> None:
        from toolmgmt_core._stores.postgres_db import Database

        schema = (
            f"CREATE TABLE IF NOT EXISTS {EVENTS_TABLE} (id bigserial PRIMARY KEY, "
            "at timestamptz NOT NULL DEFAULT now(), record jsonb NOT NULL);"
        )
        self._db = Database(dsn, schema, timeout=timeout, application="toolmgmt-events")
        self.max_records = max_records
        self.where = self._db.where

    def write(self, lines: Sequence[str]) -> None:
        def insert(conn: Any) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {EVENTS_TABLE} (record) VALUES (%s::jsonb)",
                    [(line,) for line in lines],
                )
                cursor.execute(
                    f"DELETE FROM {EVENTS_TABLE} WHERE id <= "
                    f"(SELECT max(id) FROM {EVENTS_TABLE}) - %s",
                    [self.max_records],
                )

        self._db.run("write the usage log", insert)

    def read(self) -> Iterator[dict[str, Any]]:
        after = 0
        while True:

            def page(conn: Any, after: int = after) -> list[tuple[int, Any]]:
                rows = conn.execute(
                    f"SELECT id, record::text FROM {EVENTS_TABLE} WHERE id > %s ORDER BY id "
                    "LIMIT %s",
                    [after, _PAGE],
                ).fetchall()
                return [(int(r[0]), r[1]) for r in rows]

            rows = self._db.run("read the usage log", page)
            yield from parse_records(text for _, text in rows)
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    def close(self) -> None:
        self._db.close()


def open_event_log(dsn: str, **options: Any) -> RedisEventLog | PostgresEventLog:
    """The usage log at ``dsn``: ``redis://``, ``rediss://`` or ``unix://`` (a Redis stream),
    ``postgresql://`` or ``postgres://`` (a table).

    Raises:
        ConfigError: another scheme; the message names the valid ones.
        ImportError: the store's driver is not installed (the message names the extra).
    """
    scheme = dsn.partition("://")[0].lower() if isinstance(dsn, str) else ""
    if scheme in ("redis", "rediss", "unix"):
        return RedisEventLog(dsn, **options)
    if scheme in ("postgresql", "postgres"):
        return PostgresEventLog(dsn, **options)
    raise ConfigError(
        f"A usage log store is a redis://, rediss://, unix:// or postgresql:// URL, got "
        f"{scheme + '://...' if scheme else repr(dsn)[:40]}."
    )


class StoreListener:
    """Writes each event's record to an :class:`EventLog` from a background thread.

    Args:
        log: where (:func:`open_event_log`).
        capture_content: write argument, result and query text (bounded); None reads
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (off when unset).
        max_pending: records waiting to be written at most; past it new ones are dropped.
        flush_seconds: the longest a record waits before its batch is written.
        meter_provider: where :data:`DROPPED_METRIC` goes (default: the global one).
    """

    def __init__(
        self,
        log: EventLog,
        *,
        capture_content: bool | ContentCapture | None = None,
        max_pending: int = 10_000,
        flush_seconds: float = 0.5,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.log = log
        self.content = ContentCapture.of(capture_content)
        self.flush_seconds = flush_seconds
        self.written = 0
        """Records written."""
        self.dropped = 0
        """Records lost: the queue was full, or the store refused their batch."""
        self.errors = 0
        """Batches the store refused or did not take in time."""
        self._queue: queue.Queue[str | None] = queue.Queue(max_pending)
        self._idle = threading.Condition()
        self._thread = start_thread("event-log", self._run)
        meter = metrics.get_meter("toolmgmt", meter_provider=meter_provider)
        this = weakref.ref(self)  # the meter keeps its callbacks: it must not keep the listener

        def dropped(options: CallbackOptions) -> Iterable[Observation]:
            listener = this()
            return [Observation(listener.dropped)] if listener is not None else []

        meter.create_observable_counter(
            DROPPED_METRIC,
            [dropped],
            unit="{record}",
            description="Usage records dropped: the queue was full, or the store refused them.",
        )

    def __call__(self, event: Event) -> None:
        record = event_record(event, self.content)
        if record is None:
            return
        try:
            self._queue.put_nowait(record_line(record))
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        last_warning = 0.0
        while True:
            first = self._queue.get()
            batch = [first]
            deadline = time.monotonic() + self.flush_seconds
            while len(batch) < _BATCH and batch[-1] is not None:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            stop = batch[-1] is None
            lines = [line for line in batch if line is not None]
            if lines:
                try:
                    self.log.write(lines)
                    self.written += len(lines)
                except StoreError as exc:
                    self.errors += 1
                    self.dropped += len(lines)
                    if time.monotonic() - last_warning > 60:  # said once a minute at most
                        last_warning = time.monotonic()
                        logger.warning(
                            "%d records dropped (%d in all): the store refused them: %s",
                            len(lines),
                            self.dropped,
                            exc,
                        )
            with self._idle:
                for _ in batch:
                    self._queue.task_done()
                self._idle.notify_all()
            if stop:
                return

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every record so far is written (or dropped); whether that happened in
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is pending, stop the thread and close the log."""
        if self._thread.is_alive():
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                pass  # the thread is stuck on the store: it is a daemon, left to end
            self._thread.join(timeout)
        self.log.close()


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
