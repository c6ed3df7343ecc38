"""Shared pieces of the demo catalog: schema helpers, annotation presets, a fake record store.

Each domain module (``crm.py``, ``files.py``, ...) builds its tools from these. Nothing here is
public API; the demo's public names live in :mod:`toolmgmt_demo`.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from toolmgmt_core import ToolAnnotations

__all__ = [
    "COMPANY_WORDS",
    "CREATE",
    "DELETE",
    "EPOCH",
    "FIRST_NAMES",
    "LAST_NAMES",
    "READ",
    "READ_OPEN",
    "SEND",
    "UPDATE",
    "RecordNotFoundError",
    "Store",
    "array",
    "boolean",
    "enum",
    "integer",
    "iso",
    "matches",
    "number",
    "obj",
    "page",
    "rng",
    "string",
]

# -- annotation presets ------------------------------------------------------------------------

READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)
"""Looks things up in the domain's own system; changes nothing."""
READ_OPEN = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=True)
"""Looks things up on the open web."""
CREATE = ToolAnnotations(read_only=False, destructive=False, idempotent=False, open_world=False)
"""Creates something new; calling twice creates two."""
UPDATE = ToolAnnotations(read_only=False, destructive=False, idempotent=True, open_world=False)
"""Changes a record in place; calling twice with the same arguments changes nothing more."""
DELETE = ToolAnnotations(read_only=False, destructive=True, idempotent=True, open_world=False)
"""Removes or irreversibly changes data."""
SEND = ToolAnnotations(read_only=False, destructive=False, idempotent=False, open_world=True)
"""Reaches other people (sends a message, an invitation, an invoice)."""

# -- JSON Schema helpers ------------------------------------------------------------------------


def _with(schema: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    schema.update({k: v for k, v in extra.items() if v is not None})
    return schema


def string(description: str, **extra: Any) -> dict[str, Any]:
    """A string property (``format``, ``pattern``, ``default``, ``minLength``... in ``extra``)."""
    return _with({"type": "string", "description": description}, extra)


def integer(description: str, **extra: Any) -> dict[str, Any]:
    """An integer property (``minimum``, ``maximum``, ``default`` in ``extra``)."""
    return _with({"type": "integer", "description": description}, extra)


def number(description: str, **extra: Any) -> dict[str, Any]:
    """A number property."""
    return _with({"type": "number", "description": description}, extra)


def boolean(description: str, default: bool | None = None) -> dict[str, Any]:
    """A boolean property."""
    return _with({"type": "boolean", "description": description}, {"default": default})


def enum(values: Iterable[str], description: str, **extra: Any) -> dict[str, Any]:
    """A string restricted to ``values``."""
    return _with({"type": "string", "enum": list(values), "description": description}, extra)


def array(items: Mapping[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    """An array of ``items``."""
    return _with({"type": "array", "items": dict(items), "description": description}, extra)


def obj(
    properties: Mapping[str, Any],
    required: Iterable[str] = (),
    *,
    description: str | None = None,
    closed: bool = True,
) -> dict[str, Any]:
    """An object schema; ``closed`` forbids properties that are not listed."""
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = dict(properties)
    schema["required"] = list(required)  # explicit, even when empty (strict modes want it)
    if closed:
        schema["additionalProperties"] = False
    return schema


def page(description: str = "Maximum number of results to return.", default: int = 20) -> dict:
    """The usual ``limit`` property."""
    return integer(description, minimum=1, maximum=100, default=default)


# -- determinism --------------------------------------------------------------------------------

EPOCH = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
"""The demo's "now": every generated date is relative to it, so results never change."""


def rng(*parts: Any) -> random.Random:
    """A random generator seeded from ``parts`` (the tool name and its arguments)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return random.Random(int.from_bytes(hashlib.sha256(blob).digest()[:8], "big"))


def iso(moment: datetime | None = None, *, days: float = 0, minutes: float = 0) -> str:
    """An ISO 8601 timestamp ``days``/``minutes`` after ``moment`` (default :data:`EPOCH`)."""
    moment = (moment or EPOCH) + timedelta(days=days, minutes=minutes)
    return moment.isoformat().replace("+00:00", "Z")


FIRST_NAMES = (
    "Ada Alan Amara Ben Carla Chen Dana Diego Elena Farah Grace Hiro Ines Jonas Kai Lena Liam "
    "Maya Mateo Nadia Noah Olga Omar Priya Quinn Rosa Sam Sofia Tariq Uma Victor Wen Yara Zoe"
).split()
LAST_NAMES = (
    "Abbott Baker Castillo Dubois Eriksen Fischer Garcia Haddad Ito Jensen Kowalski Lindqvist "
    "Moreau Nakamura Okafor Patel Quintero Rossi Schmidt Tanaka Usman Varga Weber Xu Yilmaz Zhang"
).split()
COMPANY_WORDS = (
    "Acme Northwind Globex Initech Umbrella Stark Wayne Tyrell Cyberdyne Soylent Hooli Vandelay "
    "Pied Piper Massive Dynamic Aperture Oscorp Gringotts Monarch Wonka"
).split()


# -- a fake backend table -----------------------------------------------------------------------


class RecordNotFoundError(KeyError):
    """An id that is not in a demo store; the message says what ids look like."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class Store:
    """An in-memory table of records (dicts) keyed by ids such as ``con_0001``.

    Each catalog built by ``demo_catalog()`` gets its own stores, so what one tool creates
    another can read, and two catalogs never share state.
    """

    def __init__(self, kind: str, prefix: str, finder: str) -> None:
        self.kind = kind
        """What a record is, for messages ("contact")."""
        self.prefix = prefix
        """The id prefix ("con")."""
        self.finder = finder
        """The tool a model should use to find a valid id, named in errors."""
        self.records: dict[str, dict[str, Any]] = {}
        self._next = 1

    def new_id(self) -> str:
        """The next free id."""
        while f"{self.prefix}_{self._next:04d}" in self.records:
            self._next += 1
        record_id = f"{self.prefix}_{self._next:04d}"
        self._next += 1
        return record_id

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        """Store ``record`` under its ``id`` (a new one when it has none); return it."""
        record.setdefault("id", self.new_id())
        self.records[record["id"]] = record
        return record

    def get(self, record_id: str) -> dict[str, Any]:
        """The record ``record_id``.

        Raises:
            RecordNotFoundError: saying what a valid id looks like and how to find one.
        """
        try:
            return self.records[record_id]
        except KeyError:
            sample = next(iter(self.records), f"{self.prefix}_0001")
            raise RecordNotFoundError(
                f"No {self.kind} with id {record_id!r}. Ids look like {sample!r}; "
                f"use {self.finder} to find one."
            ) from None

    def update(self, record_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Apply the non-None ``changes`` to a record; return it."""
        record = self.get(record_id)
        record.update({k: v for k, v in changes.items() if v is not None})
        return record

    def delete(self, record_id: str) -> dict[str, Any]:
        """Remove a record; return it."""
        record = self.get(record_id)
        del self.records[record_id]
        return record

    def select(
        self,
        where: Callable[[dict[str, Any]], bool] | None = None,
        *,
        limit: int = 20,
        offset: int = 0,
        sort_key: str | None = None,
        descending: bool = False,
    ) -> dict[str, Any]:
        """A page of matching records: ``{"items", "total", "next_offset"}``."""
        rows = [r for r in self.records.values() if where is None or where(r)]
        if sort_key:
            rows.sort(key=lambda r: (r.get(sort_key) is None, r.get(sort_key)), reverse=descending)
        chosen = rows[offset : offset + limit]
        following = offset + limit if offset + limit < len(rows) else None
        return {"items": chosen, "total": len(rows), "next_offset": following}


def matches(text: str | None, query: str | None) -> bool:
    """Whether every word of ``query`` occurs in ``text`` (case-insensitive)."""
    if not query:
        return True
    haystack = (text or "").lower()
    return all(word in haystack for word in query.lower().split())
