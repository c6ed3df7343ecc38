"""Pinned tool definitions in PostgreSQL, so that every gateway replica agrees on them
(``toolmgmt[postgres]``; :mod:`toolmgmt_core.catalog.pins` says what a pin is).

One row per tool name in ``toolmgmt_pins``: the pinned digest and definition, and the change
held back for an operator (``pending``). A check takes the pins' transaction lock, reads the
rows, decides with :func:`~toolmgmt_core.catalog.pins.decide` and writes, so two replicas
listing the same changed upstream at once hold the same change back, and the first sight of a
tool is pinned once.

Usage::

    pins = PostgresPins("postgresql://toolmgmt@db/toolmgmt")
    verdicts = pins.check("notes", {"notes_delete_note": definition})
    pins.trust(["notes_delete_note"])          # toolmgmt catalog trust notes_delete_note
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolmgmt_core.catalog.pins import Pin, PinVerdict, decide, pin_digest
from toolmgmt_core.stores.base import StoreTimeout
from toolmgmt_core.stores.postgres_db import Database, Jsonb, psycopg

__all__ = ["PINS_TABLE", "PostgresPins"]

PINS_TABLE = "toolmgmt_pins"
"""The table of pinned tool definitions."""

_PINS_LOCK = 0x70696E73  # "pins": checks and trusts take turns
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {PINS_TABLE} (
    name text PRIMARY KEY,
    source text NOT NULL,
    digest text NOT NULL,
    definition jsonb NOT NULL,
    pending jsonb,
    updated_at timestamptz NOT NULL DEFAULT now()
);
"""
_UPSERT = f"""
INSERT INTO {PINS_TABLE} (name, source, digest, definition, pending)
VALUES (%(name)s, %(source)s, %(digest)s, %(definition)s, %(pending)s)
ON CONFLICT (name) DO UPDATE SET source = EXCLUDED.source, digest = EXCLUDED.digest,
    definition = EXCLUDED.definition, pending = EXCLUDED.pending, updated_at = now()
"""


def _read(conn: psycopg.Connection[Any], names: list[str] | None) -> dict[str, Pin]:
    where, params = ("WHERE name = ANY(%s)", [names]) if names is not None else ("", [])
    rows = conn.execute(
        f"SELECT name, source, digest, definition, pending FROM {PINS_TABLE} {where}", params
    )
    return {row[0]: Pin(row[0], row[1], row[2], row[3], row[4]) for row in rows}


def _write(conn: psycopg.Connection[Any], pins: list[Pin]) -> None:
    if not pins:
        return
    with conn.cursor() as cursor:
        cursor.executemany(
            _UPSERT,
            [
                {
                    "name": p.name,
                    "source": p.source,
                    "digest": p.digest,
                    "definition": Jsonb(p.definition),
                    "pending": Jsonb(p.pending) if p.pending is not None else None,
                }
                for p in pins
            ],
        )


class PostgresPins:
    """A :class:`~toolmgmt_core.catalog.pins.PinStore` in PostgreSQL. Thread-safe."""

    def __init__(self, dsn: str, *, timeout: float | StoreTimeout = 5.0) -> None:
        """
        Args:
            dsn: ``postgresql://user[:password]@host[:port]/dbname`` or a key=value string.
            timeout: seconds to connect and for each operation.

        Raises:
            ConfigError: ``dsn`` cannot be parsed.
        """
        self._db = Database(dsn, _SCHEMA, timeout=timeout, application="toolmgmt-pins")
        self.where = self._db.where
        """The server, for messages (without the password)."""

    def __repr__(self) -> str:
        return f"PostgresPins({self.where!r})"

    def check(
        self, source: str, definitions: Mapping[str, dict[str, Any]], *, accept: bool = False
    ) -> dict[str, PinVerdict]:
        """See :meth:`~toolmgmt_core.catalog.pins.PinStore.check`.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was written).
        """

        def work(conn: psycopg.Connection[Any]) -> dict[str, PinVerdict]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_PINS_LOCK])
            stored = _read(conn, list(definitions))
            verdicts, writes = {}, []
            for name, definition in definitions.items():
                write, verdicts[name] = decide(
                    stored.get(name), name, source, definition, accept=accept
                )
                if write is not None:
                    writes.append(write)
            _write(conn, writes)
            return verdicts

        if not definitions:
            return {}
        return self._db.run(f"check the pins of {source!r}", work)

    def get(self, names: Iterable[str]) -> dict[str, Pin]:
        wanted = list(dict.fromkeys(names))
        return self._db.run("read pins", lambda conn: _read(conn, wanted)) if wanted else {}

    def trust(self, names: Iterable[str]) -> list[str]:
        """Accept each name's pending change; the names that had one."""
        wanted = list(dict.fromkeys(names))

        def work(conn: psycopg.Connection[Any]) -> list[str]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_PINS_LOCK])
            stored = _read(conn, wanted)
            accepted = [
                Pin(p.name, p.source, pin_digest(p.pending), p.pending)
                for p in stored.values()
                if p.pending is not None
            ]
            _write(conn, accepted)
            return sorted(p.name for p in accepted)

        return self._db.run("trust pinned changes", work) if wanted else []

    def pins(self) -> list[Pin]:
        found = self._db.run("list pins", lambda conn: _read(conn, None))
        return [found[n] for n in sorted(found)]

    def close(self) -> None:
        """Close the connection (reopened if used again)."""
        self._db.close()
