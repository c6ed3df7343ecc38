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

An account keeps its newest :data:`KEPT_RECORDS` records one by one and folds older ones into
one total (``"folded": {"upto", "count", "tokens", "original_tokens"}``: every record of
``order`` up to ``upto``, and the tokens of those not cleared), once it holds more than
:data:`FOLD_AT`: a conversation's state, and the time to restore and save it on every call,
stay bounded however many calls a model makes. Folding is cumulative and decided by ``order``
alone, so two replicas folding from one state agree, and a merge keeps the fold that reaches
furthest. A folded result can no longer be cleared or proposed for clearing.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from toolmgmt_core._model.errors import ConfigError

__all__ = [
    "FOLD_AT",
    "KEPT_RECORDS",
    "MAX_RECORD_ID_CHARS",
    "MAX_RESTORED_RECORDS",
    "Account",
    "FoldedRecords",
    "ResultRecord",
    "fold_records",
    "merge_accounts",
    "new_record_id",
    "read_account",
]

MAX_RESTORED_RECORDS = 100_000
"""Most result records (and cleared ids) a restored account may hold."""

MAX_RECORD_ID_CHARS = 256
"""Longest record id, call id or cleared id a restored account may hold."""

KEPT_RECORDS = 100
"""Records an account keeps one by one once it folds (the newest)."""

FOLD_AT = 2 * KEPT_RECORDS
"""Records an account holds at most before the older ones are folded into one total."""

_MAX_FOLDED = 10**15
"""Largest count or token total a restored fold may hold."""

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


@dataclass(frozen=True)
class FoldedRecords:
    """The records an account no longer keeps one by one, as one total."""

    upto: int = -1
    """Every record of ``order`` up to this is folded (-1: none)."""
    count: int = 0
    """How many results were folded."""
    tokens: int = 0
    """Tokens of the folded results still in the context (not cleared when folded)."""
    original_tokens: int = 0
    """Tokens of the folded results before truncation."""

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Account:
    """An account read from JSON: its kept records, the ids of the cleared ones, its fold."""

    records: list[ResultRecord]
    cleared: set[str]
    folded: FoldedRecords = FoldedRecords()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "records": [r.to_dict() for r in self.records],
            "cleared": sorted(self.cleared),
        }
        if self.folded.count:
            out["folded"] = self.folded.to_dict()
        return out


def fold_records(account: Account) -> Account:
    """``account`` with all but its newest :data:`KEPT_RECORDS` records folded, when it holds
    more than :data:`FOLD_AT` (else itself). Records that share the cut's ``order`` are folded
    together, so two replicas folding the same records agree."""
    records = account.records
    if len(records) <= FOLD_AT:
        return account
    upto = sorted(r.order for r in records)[len(records) - KEPT_RECORDS - 1]
    out = [r for r in records if r.order <= upto]
    folded = account.folded
    live = [r for r in out if r.id not in account.cleared]
    gone = {r.id for r in out}
    return Account(
        records=[r for r in records if r.order > upto],
        cleared=account.cleared - gone,
        folded=FoldedRecords(
            upto=max(upto, folded.upto),
            count=folded.count + len(out),
            tokens=folded.tokens + sum(r.tokens for r in live),
            original_tokens=folded.original_tokens + sum(r.original_tokens for r in out),
        ),
    )


def _text(value: Any, what: str) -> str:
    text = str(value)
    if not text or len(text) > MAX_RECORD_ID_CHARS:
        raise ValueError(f"{what} must be 1 to {MAX_RECORD_ID_CHARS} characters")
    return text


def read_account(state: Mapping[str, Any]) -> Account:
    """An account's ``{"records", "cleared", "folded"}`` JSON checked and read (untrusted
    input: bounded, every field checked; records the fold covers are dropped, and an account
    over :data:`FOLD_AT` records is folded).

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
        folded = _read_folded(state.get("folded"))
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
        raise ConfigError(
            "Result budget state must be {'records': [{id, call_id, tool_name, tokens, ...}], "
            "'cleared': [record ids], 'folded': {upto, count, tokens, original_tokens}} from "
            f"SessionBudget.to_json(): {exc!r}."
        ) from exc
    cleared = cleared_names & ids
    by_call = cleared_names - ids
    if by_call:  # state written before records had ids clears by call id
        cleared |= {r.id for r in records if r.call_id in by_call}
    return _settled(records, cleared, folded)


_FOLDED_LOWEST: dict[str, int] = asdict(FoldedRecords())
"""Each field of a fold and its lowest value (its default: an empty fold)."""


def _read_folded(raw: Any) -> FoldedRecords:
    if raw is None:
        return FoldedRecords()
    if not isinstance(raw, Mapping) or set(raw) - set(_FOLDED_LOWEST):
        raise ValueError(f"'folded' must be {{{', '.join(_FOLDED_LOWEST)}}}")
    values = {}
    for key, low in _FOLDED_LOWEST.items():
        value = raw.get(key, low)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= _MAX_FOLDED:
            raise ValueError(f"folded {key} must be a whole number from {low} to {_MAX_FOLDED}")
        values[key] = value
    return FoldedRecords(**values)


def _settled(records: list[ResultRecord], cleared: set[str], folded: FoldedRecords) -> Account:
    """An account without the records its fold covers, folded when it holds too many."""
    if folded.upto >= 0:
        records = [r for r in records if r.order > folded.upto]
        cleared = cleared & {r.id for r in records}
    return fold_records(Account(records, cleared, folded))


def merge_accounts(stored: Mapping[str, Any] | None, mine: Mapping[str, Any]) -> dict[str, Any]:
    """The account a store holds with one writer's account merged in: records by id (the
    stored ones first, then the writer's new ones, in its order), cleared ids added up, and
    the fold that reaches furthest (folds are cumulative). What two replicas spent from one
    state adds up; a record both hold (the state they restored, a save retried after a
    conflict) counts once.

    Raises:
        ConfigError: either is not an account's state.
    """
    fast = _extending(stored, mine)
    if fast is not None:
        return fast
    my = read_account(mine)
    if stored is None:
        return my.to_json()
    theirs = read_account(stored)
    known = {r.id for r in theirs.records}
    records = [*theirs.records, *(r for r in my.records if r.id not in known)]
    folded = max(theirs.folded, my.folded, key=lambda f: (f.upto, f.count))
    return _settled(records, theirs.cleared | my.cleared, folded).to_json()


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
    if stored.get("folded") != mine.get("folded") or len(my_records) > FOLD_AT:
        return None  # folded since: read them
    out = {"records": list(my_records), "cleared": list(my_cleared)}
    if mine.get("folded") is not None:
        out["folded"] = mine["folded"]
    return out
