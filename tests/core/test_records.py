"""Result records have ids of their own: two replicas recording calls of one conversation never
confuse them, clearing names one call, and state written before records had ids still loads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolmgmt_core import ConfigError, ResultBudget
from toolmgmt_core._calls.records import (
    FOLD_AT,
    KEPT_RECORDS,
    MAX_RECORD_ID_CHARS,
    MAX_RESTORED_RECORDS,
    merge_accounts,
    read_account,
)

# What SessionBudget.to_json wrote before records had ids (``call_<n>``, cleared by call id),
# as two replicas left it: each numbered its own second call ``call_2``.
LEGACY = {
    "records": [
        {"call_id": "call_1", "tool_name": "read_file", "tokens": 100, "order": 0},
        {"call_id": "call_2", "tool_name": "read_file", "tokens": 50, "order": 1},
        {"call_id": "call_2", "tool_name": "list_emails", "tokens": 30, "order": 1},
    ],
    "cleared": ["call_1"],
}


def _spend(state: dict[str, Any] | None, *tokens: int) -> dict[str, Any]:
    """What one replica's account holds after restoring ``state`` and recording ``tokens``."""
    account = ResultBudget().start(state)
    for size in tokens:
        account.record(size, tool_name="read_file")
    return account.to_json()


def test_default_call_ids_are_unique_across_accounts_restored_from_one_state() -> None:
    base = _spend(None, 10)
    a, b = _spend(base, 20), _spend(base, 30)
    new_a, new_b = a["records"][-1], b["records"][-1]
    assert new_a["order"] == new_b["order"] == 1  # the same position in the conversation...
    assert new_a["call_id"] != new_b["call_id"] and new_a["id"] != new_b["id"]  # ...not the id
    assert new_a["call_id"] == f"call_{new_a['id']}"


def test_merged_accounts_spend_what_both_replicas_spent() -> None:
    base = _spend(None, 10)
    a, b = _spend(base, 20, 25), _spend(base, 20)  # the same sizes: still two calls
    merged = merge_accounts(merge_accounts(base, a), b)
    account = ResultBudget().start(merged)
    assert account.used == 10 + (20 + 25) + 20
    assert len(account.records()) == 4
    # Merging again what the store already holds (a save retried) adds nothing.
    assert merge_accounts(merged, a) == merged and merge_accounts(merged, b) == merged


def test_clearing_a_call_clears_that_call_only() -> None:
    base = _spend(None, 10)
    a, b = ResultBudget().start(base), ResultBudget().start(base)
    mine = a.record(40, tool_name="read_file")
    b.record(70, tool_name="list_emails")
    assert a.mark_cleared([mine.call_id]) == 40
    merged = ResultBudget().start(merge_accounts(merge_accounts(base, a.to_json()), b.to_json()))
    assert merged.used == 10 + 70  # the other replica's call stays in the context
    # A provider that reuses call ids: clearing one names the records it names *now*.
    account = ResultBudget().start()
    account.record(5, tool_name="t", call_id="call_1")
    assert account.mark_cleared(["call_1"]) == 5
    account.record(7, tool_name="t", call_id="call_1")  # a later turn's "call_1"
    assert account.used == 7
    restored = ResultBudget().start(json.loads(json.dumps(account.to_json())))
    assert restored.used == 7


def test_state_written_before_records_had_ids_still_loads_and_merges() -> None:
    account = read_account(LEGACY)
    assert [r.id for r in account.records] == ["~0", "~1", "~2"]  # the same on every replica
    assert account.cleared == {"~0"}  # cleared by call id, read as the record's
    account = ResultBudget().start(LEGACY)
    assert account.used == 50 + 30
    # Two replicas restore the old state and each spend: nothing is lost or counted twice.
    a, b = _spend(LEGACY, 5), _spend(LEGACY, 6)
    merged = ResultBudget().start(merge_accounts(merge_accounts(LEGACY, a), b))
    assert merged.used == 50 + 30 + 5 + 6 and len(merged.records()) == 5


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"records": "many"}, "'records' and 'cleared' lists"),
        ({"records": [{"tokens": 3}]}, "SessionBudget.to_json"),
        (
            {"records": [{"id": "x", "call_id": "c", "tool_name": "t", "tokens": 1}] * 2},
            "same id",
        ),
        ({"records": [{"id": "", "call_id": "c", "tool_name": "t", "tokens": 1}]}, "record id"),
        (
            {
                "records": [
                    {"call_id": "c" * (MAX_RECORD_ID_CHARS + 1), "tool_name": "t", "tokens": 1}
                ]
            },
            "call id",
        ),
        ({"records": [], "cleared": ["x" * (MAX_RECORD_ID_CHARS + 1)]}, "cleared id"),
        ({"records": [{"call_id": "c", "tool_name": "t", "tokens": -1}]}, "negative"),
        ({"records": [], "cleared": ["c"] * (MAX_RESTORED_RECORDS + 1)}, "over 100,000"),
        ({"records": [], "folded": {"upto": 3, "tokens": -1}}, "folded tokens"),
        ({"records": [], "folded": {"upto": 3, "count": float("inf")}}, "folded count"),
        ({"records": [], "folded": {"upto": 3, "more": 1}}, "'folded' must be"),
        ({"records": [], "folded": [1, 2]}, "'folded' must be"),
    ],
)
def test_a_bad_account_is_refused_saying_what_is_valid(state: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ResultBudget().start(state)
    with pytest.raises(ConfigError, match=message):
        merge_accounts(None, state)


def test_a_long_conversation_keeps_its_newest_records_and_a_total_of_the_rest() -> None:
    account = ResultBudget().start()
    first = account.record(7, tool_name="t")
    for _ in range(FOLD_AT):
        account.record(10, tool_name="t")
    assert account.mark_cleared([first.call_id]) == 0  # folded: no longer clearable
    # Over FOLD_AT records, all but the newest KEPT_RECORDS became one total.
    assert len(account.records()) == KEPT_RECORDS
    assert account.folded.count == FOLD_AT + 1 - KEPT_RECORDS
    assert account.used == 7 + 10 * FOLD_AT  # every result still counts
    state = json.loads(json.dumps(account.to_json()))
    assert len(state["records"]) == KEPT_RECORDS and state["folded"]["count"] > 0
    restored = ResultBudget().start(state)
    assert restored.used == account.used and restored.records() == account.records()
    later = restored.record(1, tool_name="t")
    assert later.order > max(r.order for r in account.records())
    # However many calls: the state stays bounded.
    for _ in range(5 * FOLD_AT):
        restored.record(1, tool_name="t")
    assert len(restored.to_json()["records"]) <= FOLD_AT


def test_a_cleared_result_folds_out_of_the_total() -> None:
    account = ResultBudget().start()
    early = [account.record(100, tool_name="t") for _ in range(10)]
    account.mark_cleared([r.call_id for r in early[:5]])
    for _ in range(FOLD_AT):
        account.record(1, tool_name="t")
    assert account.folded.tokens == 5 * 100 + (account.folded.count - 10)
    assert account.used == 500 + FOLD_AT
    assert not account.to_json()["cleared"]  # the cleared ids went with their records


def test_two_replicas_folding_one_conversation_lose_and_double_nothing() -> None:
    base = _spend(None, 1)
    for _ in range(FOLD_AT - 1):
        base = _spend(base, 1)
    a, b = ResultBudget().start(base), ResultBudget().start(base)
    a.record(5, tool_name="t")
    a.record(5, tool_name="t")  # a folds (FOLD_AT + 2 records)
    b.record(7, tool_name="t")  # b does not (FOLD_AT + 1 records), or folds alike
    assert a.folded.count > 0
    for first, second in ((a, b), (b, a)):
        merged = merge_accounts(merge_accounts(base, first.to_json()), second.to_json())
        account = ResultBudget().start(merged)
        assert account.used == FOLD_AT + 5 + 5 + 7  # every call counted once
        kept = {r.id for r in account.records()}
        assert len(kept) == len(account.records()) <= FOLD_AT
        assert account.folded.count + len(kept) == FOLD_AT + 3
