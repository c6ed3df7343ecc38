"""A session's result records: what each result took, named so that two writers never confuse
them, read back from untrusted JSON, and merged when two replicas wrote one conversation.

Every record has an ``id`` of its own, random and unique (``"3f9a0c12be47"``): two replicas
serving one conversation each record their calls without asking the other, so a number counted
per session (``call_3``) would name two different calls. The ``call_id`` is what the model knows
the call by (the provider's tool-call id, else ``call_<id>``); clearing names records by either,
and the account keeps the cleared *record* ids, so clearing one call never clears another
replica's call that the provider happened to give the same id. The account as JSON::

    {"records": [{"id": "3f9a0c12be47", "call_id": "toolu_01...", "tool_name": "read_file",
                  "tokens": 120, "original_tokens": 900, "truncated": true, "order": 0}, ...],
     "cleared": ["3f9a0c12be47"]}

State written before records had ids still loads: a record without one gets ``~<position>``
(the same on every replica restoring the same list, so merging them keeps one of each), and a
cleared entry that names no record id is read as a call id.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core.errors import ConfigError

__all__ = [
    "MAX_RECORD_ID_CHARS",
    "MAX_RESTORED_RECORDS",
    "ResultRecord",
    "merge_accounts",
    "new_record_id",
    "read_account",
]

MAX_RESTORED_RECORDS = 100_000
"""Most result records (and cleared ids) a restored account may hold."""

MAX_RECORD_ID_CHARS = 256
"""Longest record id, call id or cleared id a restored account may hold."""

_LEGACY = "~"
"""What the id given to a record restored without one starts with (never a random id's)."""


def new_record_id() -> str:
    """A fresh record id: 12 hexadecimal characters (48 random bits; two records of one
    conversation share one with odds of about one in 10^8 at 10,000 records)."""
    return secrets.token_hex(6)


@dataclass(frozen=True)
class ResultRecord:
    """One result as the session's account saw it."""

    call_id: str
    """The call's id as the model knows it (the provider's tool-call id when known, else
    ``call_<id>``)."""
    tool_name: str
    """The tool that produced it."""
    tokens: int
    """Tokens sent to the model."""
    original_tokens: int
    """Tokens before truncation."""
    truncated: bool = False
    """Whether it was cut or summarised."""
    order: int = 0
    """Position in the session when recorded (0 for the first result; two replicas recording
    at once may give two results the same)."""
    id: str = field(default_factory=new_record_id)
    """The record's own id, unique in its conversation (see the module docstring)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "tokens": self.tokens,
            "original_tokens": self.original_tokens,
            "truncated": self.truncated,
            "order": self.order,
        }


def _text(value: Any, what: str) -> str:
    text = str(value)
    if not text or len(text) > MAX_RECORD_ID_CHARS:
        raise ValueError(f"{what} must be 1 to {MAX_RECORD_ID_CHARS} characters")
    return text


def read_account(state: Mapping[str, Any]) -> tuple[list[ResultRecord], set[str]]:
    """An account's ``{"records", "cleared"}`` JSON checked and read: its records, and the ids
    of the cleared ones (untrusted input: bounded, every field checked).

    Raises:
        ConfigError: ``state`` is not an account's state; the message says what is valid.
    """
    if not isinstance(state, Mapping):
        raise ConfigError("Result budget state must be an object from SessionBudget.to_json().")
    raw_records, raw_cleared = state.get("records", []), state.get("cleared", [])
    if not isinstance(raw_records, list) or not isinstance(raw_cleared, list):
        raise ConfigError("Result budget state needs 'records' and 'cleared' lists.")
    if len(raw_records) > MAX_RESTORED_RECORDS or len(raw_cleared) > MAX_RESTORED_RECORDS:
        # Untrusted state: every call would sum an unbounded list.
        raise ConfigError(
            f"Result budget state holds over {MAX_RESTORED_RECORDS:,} records; a session "
            "never makes that many calls."
        )
    try:
        records = [
            ResultRecord(
                id=_text(r["id"], "a record id") if "id" in r else f"{_LEGACY}{i}",
                call_id=_text(r["call_id"], "a call id"),
                tool_name=str(r["tool_name"]),
                tokens=int(r["tokens"]),
                original_tokens=int(r.get("original_tokens", r["tokens"])),
                truncated=bool(r.get("truncated", False)),
                order=int(r.get("order", i)),
            )
            for i, r in enumerate(raw_records)
        ]
        cleared_names = {_text(c, "a cleared id") for c in raw_cleared}
        if any(r.tokens < 0 or r.original_tokens < 0 for r in records):
            raise ValueError("token counts must not be negative")
        ids = {r.id for r in records}
        if len(ids) != len(records):
            raise ValueError("two records have the same id")
    except (TypeError, KeyError, ValueError, AttributeError, OverflowError) as exc:
        raise ConfigError(  # OverflowError: "tokens": Infinity, which JSON text may hold
            "Result budget state must be {'records': [{id, call_id, tool_name, tokens, ...}], "
            f"'cleared': [record ids]}} from SessionBudget.to_json(): {exc!r}."
        ) from exc
    cleared = cleared_names & ids
    by_call = cleared_names - ids
    if by_call:  # state written before records had ids clears by call id
        cleared |= {r.id for r in records if r.call_id in by_call}
    return records, cleared


def merge_accounts(stored: Mapping[str, Any] | None, mine: Mapping[str, Any]) -> dict[str, Any]:
    """The account a store holds with one writer's account merged in: records by id (the
    stored ones first, then the writer's new ones, in its order), cleared ids added up. What
    two replicas spent from one state adds up; a record both hold (the state they restored,
    a save retried after a conflict) counts once.

    Raises:
        ConfigError: either is not an account's state.
    """
    fast = _extending(stored, mine)
    if fast is not None:
        return fast
    my_records, my_cleared = read_account(mine)
    if stored is None:
        records, cleared = my_records, my_cleared
    else:
        records, cleared = read_account(stored)
        known = {r.id for r in records}
        records = [*records, *(r for r in my_records if r.id not in known)]
        cleared = cleared | my_cleared
    return {"records": [r.to_dict() for r in records], "cleared": sorted(cleared)}


def _extending(stored: Mapping[str, Any] | None, mine: Mapping[str, Any]) -> dict[str, Any] | None:
    """``mine`` itself when it only extends ``stored`` (the usual save: a session adding to
    what it restored, or to what it last saved): no record needs reading, the list comparison
    runs in C. None when the accounts must be merged record by record."""
    if stored is None or not isinstance(mine, Mapping):
        return None
    records, my_records = stored.get("records", []), mine.get("records", [])
    cleared, my_cleared = stored.get("cleared", []), mine.get("cleared", [])
    if not (
        isinstance(records, list)
        and isinstance(my_records, list)
        and isinstance(cleared, list)
        and isinstance(my_cleared, list)
    ):
        return None
    try:
        if my_records[: len(records)] != records or not set(cleared) <= set(my_cleared):
            return None
    except TypeError:  # an unhashable cleared entry: read it (and refuse it)
        return None
    if not all(isinstance(r, dict) and "id" in r for r in records):
        return None  # written before records had ids: read them
    return {"records": list(my_records), "cleared": list(my_cleared)}
