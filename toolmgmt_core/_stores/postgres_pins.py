"""Pinned tool definitions in PostgreSQL, so that every gateway replica agrees on them
(``toolmgmt[postgres]``; :mod:`toolmgmt_core._catalog.pins` says what a pin is).

One row per tool in ``toolmgmt_pins``, found by its folded name (``folded``, unique): the
name as served, its upstream, the pinned digest and definition, and the change held back for
an operator (``pending``, listed as ``pending_name`` when it was renamed). A check takes the
pins' transaction lock, reads the rows, decides with :func:`~toolmgmt_core._catalog.pins.decide`
and writes, so two replicas listing the same changed upstream at once hold the same change
back, and the first sight of a tool is pinned once. Rows written before names were folded get
their ``folded`` on the first check or trust.

Usage::

    pins = PostgresPins("postgresql://toolmgmt@db/toolmgmt")
    verdicts = pins.check("notes", {"notes_delete_note": definition})
    pins.trust(["notes_delete_note"])          # toolmgmt catalog trust notes_delete_note
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolmgmt_core._catalog.pins import Pin, PinVerdict, decide
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._stores.base import StoreTimeout
from toolmgmt_core._stores.postgres_db import Database, Jsonb, psycopg

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
ALTER TABLE {PINS_TABLE} ADD COLUMN IF NOT EXISTS folded text;
ALTER TABLE {PINS_TABLE} ADD COLUMN IF NOT EXISTS pending_name text;
CREATE UNIQUE INDEX IF NOT EXISTS {PINS_TABLE}_folded ON {PINS_TABLE} (folded);
"""
_INSERT = f"""
INSERT INTO {PINS_TABLE} (name, folded, source, digest, definition, pending, pending_name)
VALUES (%(name)s, %(folded)s, %(source)s, %(digest)s, %(definition)s, %(pending)s,
    %(pending_name)s)
"""
_COLUMNS = "name, source, digest, definition, pending, pending_name"


def _read(conn: psycopg.Connection[Any], keys: list[str] | None) -> dict[str, Pin]:
    """The pins of these folded names (all when None), by folded name."""
    where, params = ("WHERE folded = ANY(%s)", [keys]) if keys is not None else ("", [])
    rows = conn.execute(f"SELECT {_COLUMNS} FROM {PINS_TABLE} {where}", params)
    return {fold_name(row[0]): Pin(*row) for row in rows}


def _fold_old_rows(conn: psycopg.Connection[Any]) -> None:
    """Give rows written before names were folded their folded name (a look-alike of a row
    already folded is dropped: the first pin of a name is the one kept)."""
    old = conn.execute(f"SELECT name FROM {PINS_TABLE} WHERE folded IS NULL").fetchall()
    taken = set(_read(conn, [fold_name(name) for (name,) in old]))
    for (name,) in old:
        key = fold_name(name)
        if key in taken:
            conn.execute(f"DELETE FROM {PINS_TABLE} WHERE name = %s", [name])
            continue
        conn.execute(f"UPDATE {PINS_TABLE} SET folded = %s WHERE name = %s", [key, name])
        taken.add(key)


def _write(conn: psycopg.Connection[Any], pins: list[Pin]) -> None:
    """Each pin replaces the row of its folded name (a renamed tool's old spelling too)."""
    if not pins:
        return
    conn.execute(f"DELETE FROM {PINS_TABLE} WHERE folded = ANY(%s)", [[p.key for p in pins]])
    with conn.cursor() as cursor:
        cursor.executemany(
            _INSERT,
            [
                {
                    "name": p.name,
                    "folded": p.key,
                    "source": p.source,
                    "digest": p.digest,
                    "definition": Jsonb(p.definition),
                    "pending": Jsonb(p.pending) if p.pending is not None else None,
                    "pending_name": p.pending_name,
                }
                for p in pins
            ],
        )


class PostgresPins:
    """A :class:`~toolmgmt_core._catalog.pins.PinStore` in PostgreSQL. Thread-safe."""

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
        """See :meth:`~toolmgmt_core._catalog.pins.PinStore.check`.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was written).
        """

        def work(conn: psycopg.Connection[Any]) -> dict[str, PinVerdict]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_PINS_LOCK])
            _fold_old_rows(conn)
            stored = _read(conn, [fold_name(name) for name in definitions])
            verdicts: dict[str, PinVerdict] = {}
            writes: dict[str, Pin] = {}
            for name, definition in definitions.items():
                key = fold_name(name)
                pinned = writes.get(key, stored.get(key))
                write, verdicts[name] = decide(pinned, name, source, definition, accept=accept)
                if write is not None:
                    writes[key] = write
            _write(conn, list(writes.values()))
            return verdicts

        if not definitions:
            return {}
        return self._db.run(f"check the pins of {source!r}", work)

    def get(self, names: Iterable[str]) -> dict[str, Pin]:
        wanted = {name: fold_name(name) for name in names}
        if not wanted:
            return {}
        found = self._db.run("read pins", lambda conn: _read(conn, list(wanted.values())))
        return {name: found[key] for name, key in wanted.items() if key in found}

    def trust(self, names: Iterable[str]) -> list[str]:
        """Accept each name's pending change; the names (as given) that had one."""
        wanted = {name: fold_name(name) for name in names}

        def work(conn: psycopg.Connection[Any]) -> list[str]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_PINS_LOCK])
            _fold_old_rows(conn)
            stored = _read(conn, list(wanted.values()))
            held = {key: pin for key, pin in stored.items() if pin.pending is not None}
            _write(conn, [pin.trusted() for pin in held.values()])
            return sorted(name for name, key in wanted.items() if key in held)

        return self._db.run("trust pinned changes", work) if wanted else []

    def pins(self) -> list[Pin]:
        found = self._db.run("list pins", lambda conn: _read(conn, None))
        return sorted(found.values(), key=lambda pin: pin.name)

    def close(self) -> None:
        """Close the connection (reopened if used again)."""
        self._db.close()
