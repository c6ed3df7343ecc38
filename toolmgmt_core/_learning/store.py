"""Where a catalog keeps what it learned from use: the :class:`LearnedStore` protocol and
:class:`LearnedFile`, a SQLite file for a single process.

Replicas share what they learned through PostgreSQL instead
(:class:`~toolmgmt_core._stores.postgres_learned.PostgresLearnedStore`). Either way the store is
the audit trail: every learned request with the tool it taught (its terms: in clear once
enough principals taught them, keyed digests until then), keyed digests of the principal and
the conversation that taught it, when, and from where (``use`` or ``import``); ``forget``
reverts. The key of those digests is never in the store (:mod:`toolmgmt_core._learning.keys`):
a store may keep one beside it (``key()``: a SQLite file's ``<file>.key``).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolmgmt_core._learning.requests import LearnedRequest

__all__ = ["LearnedFile", "LearnedStore", "forget_filter"]


def forget_filter(
    tool: str | None, conversation: str | None, principal: str | None, *, mark: str
) -> tuple[str, list[str]]:
    """The ``WHERE`` clause (empty: every row) and its parameters selecting what a ``forget``
    removes, for any SQL store (``mark``: its placeholder, ``?`` or ``%s``)."""
    clauses: list[str] = []
    params: list[str] = []
    if tool is not None:
        clauses.append(f"tool = {mark}")
        params.append(tool)
    if conversation is not None:
        clauses.append(f"conversation = {mark}")
        params.append(conversation)
    if principal is not None:  # rows kept before principals count for their conversation
        clauses.append(f"(principal = {mark} OR (principal = '' AND conversation = {mark}))")
        params += [principal, principal]
    return (f" WHERE {' AND '.join(clauses)}" if clauses else ""), params


@runtime_checkable
class LearnedStore(Protocol):
    """Where learned requests are kept (ids are the store's)."""

    def load(self) -> list[LearnedRequest]:
        """Every kept request, oldest first."""
        ...

    def add(self, requests: Sequence[LearnedRequest]) -> list[LearnedRequest]:
        """Keep ``requests``; return them with their ids (all of them or none)."""
        ...

    def discard(self, ids: Iterable[int]) -> None:
        """Drop these requests (made room for newer ones: nobody needs telling)."""
        ...

    def forget(
        self,
        tool: str | None = None,
        *,
        conversation: str | None = None,
        principal: str | None = None,
    ) -> int:
        """Remove a tool's requests, one conversation's or one principal's (digests), or every
        one when all are None; return how many."""
        ...


_COLUMNS = "id, tool, text, conversation, at, source, principal"


class LearnedFile:
    """Learned requests in a SQLite file (one process; crash-safe, every change committed).

    Usage::

        catalog = ToolCatalog(tools, learning=LearningOptions(store="learned.sqlite"))
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS learned (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                "tool TEXT NOT NULL, text TEXT NOT NULL, conversation TEXT NOT NULL, "
                "at REAL NOT NULL, source TEXT NOT NULL)"
            )
            conn.execute("CREATE INDEX IF NOT EXISTS learned_tool ON learned (tool)")
            columns = {row[1] for row in conn.execute("PRAGMA table_info(learned)")}
            if "principal" not in columns:  # a file kept before principals were counted
                conn.execute("ALTER TABLE learned ADD COLUMN principal TEXT NOT NULL DEFAULT ''")
            conn.execute("DROP TABLE IF EXISTS learned_salt")  # a copy could be read with it

    def __repr__(self) -> str:
        return f"LearnedFile({str(self.path)!r})"

    @property
    def key_path(self) -> Path:
        """Where the key of its digests is kept: ``<file>.key``, beside the file, never in it."""
        return self.path.with_name(self.path.name + ".key")

    def key(self) -> bytes:
        """The key of its digests (made on first use, readable by its owner only), used when
        :class:`~toolmgmt_core._learning.teaching.LearningOptions` gives none."""
        with self._lock:
            try:
                fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return self.key_path.read_bytes()
            with os.fdopen(fd, "wb") as out:
                out.write(os.urandom(32))
            return self.key_path.read_bytes()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def load(self) -> list[LearnedRequest]:
        with self._lock, self._connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM learned ORDER BY at, id").fetchall()
        return [
            LearnedRequest(tool, text, conversation, float(at), int(row_id), source, principal)
            for row_id, tool, text, conversation, at, source, principal in rows
        ]

    def add(self, requests: Sequence[LearnedRequest]) -> list[LearnedRequest]:
        kept: list[LearnedRequest] = []
        with self._lock, self._connect() as conn:  # one transaction: all or none
            for r in requests:
                cursor = conn.execute(
                    "INSERT INTO learned (tool, text, conversation, at, source, principal) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (r.tool, r.text, r.conversation, r.at, r.source, r.principal),
                )
                kept.append(dataclasses.replace(r, id=int(cursor.lastrowid or 0)))
        return kept

    def discard(self, ids: Iterable[int]) -> None:
        wanted = [(int(i),) for i in ids]
        if wanted:
            with self._lock, self._connect() as conn:
                conn.executemany("DELETE FROM learned WHERE id = ?", wanted)

    def forget(
        self,
        tool: str | None = None,
        *,
        conversation: str | None = None,
        principal: str | None = None,
    ) -> int:
        where, params = forget_filter(tool, conversation, principal, mark="?")
        with self._lock, self._connect() as conn:
            return conn.execute(f"DELETE FROM learned{where}", params).rowcount
