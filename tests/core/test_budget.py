"""Result budgets per tool and per session, clearable results, and the definitions plan."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolmgmt_core import (
    ConfigError,
    ResultBudget,
    SessionBudget,
    Tool,
    plan_definitions,
)
from toolmgmt_core._calls.truncation import MIN_RESULT_TOKENS, TruncationResult
from toolmgmt_core._model.tokens import count_tokens


def test_tool_budget_wins_over_the_default() -> None:
    budget = ResultBudget(max_result_tokens=1_000)
    assert budget.per_result(Tool("a")) == 1_000
    assert budget.per_result(Tool("b", max_result_tokens=50)) == 50
    assert budget.per_result(Tool("c", max_result_tokens=3)) == MIN_RESULT_TOKENS
    assert budget.strategy_for(Tool("d", truncation="tail")) == "tail"
    assert budget.strategy_for(Tool("e")) == "smart"


def test_results_are_cut_harder_once_the_session_budget_is_spent() -> None:
    account = ResultBudget(max_result_tokens=1_000, session_tokens=2_500).start()
    tool = Tool("search")
    assert account.budget_for(tool) == 1_000
    account.record(1_000, tool_name="search")
    account.record(1_000, tool_name="search")
    assert account.remaining == 500 and not account.exceeded
    assert account.budget_for(tool) == 500  # no more than what is left
    account.record(500, tool_name="search")
    assert account.exceeded and account.budget_for(tool) == 500  # halved
    assert account.budget_for(Tool("t", max_result_tokens=100)) == 50
    account.record(400, tool_name="search")
    assert account.budget_for(tool) == 500  # halved, never cut to nothing


def test_without_a_session_budget_results_keep_their_own() -> None:
    account = SessionBudget()
    for _ in range(100):
        account.record(4_000, tool_name="x")
    assert account.budget_for() == 4_000 and not account.exceeded and account.remaining is None


def test_clearable_lists_largest_then_oldest_and_spares_the_latest() -> None:
    account = ResultBudget(session_tokens=1_000).start()
    sizes = [300, 100, 500, 300, 200, 900]
    for i, size in enumerate(sizes):
        account.record(size, tool_name=f"t{i}", call_id=f"c{i}")
    # 2,300 tokens in context, budget 1,000: free 1,300 without touching the latest (c5).
    assert [r.call_id for r in account.clearable()] == ["c2", "c0", "c3", "c4"]
    assert [r.call_id for r in account.clearable(target=2_000)] == ["c2"]
    # Sparing the last three cannot reach the budget: every candidate is proposed.
    assert [r.call_id for r in account.clearable(keep_last=3)] == ["c2", "c0", "c1"]
    freed = account.mark_cleared(["c2", "c0", "nope"])
    assert freed == 800 and account.used == 1_500
    assert account.mark_cleared(["c2"]) == 0  # already cleared
    assert [r.call_id for r in account.clearable()] == ["c3", "c4"]


def test_clearable_without_a_budget_lists_every_earlier_result() -> None:
    account = SessionBudget()
    for size in (10, 30, 20):
        account.record(size, tool_name="t")
    assert [r.tokens for r in account.clearable()] == [30, 10]


def test_account_state_round_trips_through_json() -> None:
    config = ResultBudget(session_tokens=1_000)
    account = config.start()
    account.record(700, tool_name="a", original_tokens=9_000, truncated=True, call_id="x")
    account.record(600, tool_name="b")
    account.mark_cleared(["x"])
    state = json.loads(json.dumps(account.to_json()))
    restored = config.start(state)
    assert restored.records() == account.records() and restored.used == 600
    later = restored.record(1, tool_name="c")
    assert later.order == 2  # numbering goes on
    assert later.id not in {r.id for r in account.records()}  # a record id of its own
    with pytest.raises(ConfigError, match="SessionBudget.to_json"):
        config.start({"records": [{"tokens": 3}]})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_result_tokens": 5}, "at least 16"),
        ({"session_tokens": 0}, "session_tokens"),
        ({"over_budget_factor": 0}, r"\(0, 1\]"),
        ({"strategy": "middle"}, "'head', 'tail' or 'smart'"),
        ({"summarizer": "gpt"}, "callable"),
    ],
)
def test_bad_configuration_says_what_is_valid(options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ResultBudget(**options)


def test_shape_cuts_to_the_tool_budget_and_records_it() -> None:
    account = ResultBudget(max_result_tokens=200, session_tokens=1_000).start()
    big = [{"id": i, "text": "lorem ipsum " * 20} for i in range(500)]
    result = account.shape_sync(big, Tool("list", max_result_tokens=100), call_id="c1")
    assert result.truncated and result.tokens <= 100
    record = account.records()[0]
    assert (record.call_id, record.tool_name, record.tokens) == ("c1", "list", result.tokens)
    assert record.original_tokens == result.original_tokens > 100


def test_shape_awaits_an_async_summariser_and_falls_back_when_it_fails() -> None:
    async def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        if goal == "fail":
            raise TimeoutError("upstream")
        return f"{tool_name}: 500 rows"

    account = ResultBudget(max_result_tokens=100, summarizer=summarise).start()
    big = [{"id": i, "text": "lorem ipsum " * 20} for i in range(500)]
    ok = asyncio.run(account.shape(big, Tool("list")))
    failed = asyncio.run(account.shape(big, Tool("list"), goal="fail"))
    assert ok.summarized and ok.value == "list: 500 rows"
    assert failed.note == "SummaryFailed: TimeoutError: upstream" and failed.tokens <= 100
    assert [r.truncated for r in account.records()] == [True, True]


def test_shape_sync_summarises_through_the_one_bridge_even_inside_a_running_loop() -> None:
    async def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        return f"{tool_name} for {goal}: 500 rows"

    account = ResultBudget(max_result_tokens=100, summarizer=summarise).start()
    big = [{"id": i, "text": "lorem ipsum " * 20} for i in range(500)]
    plain = account.shape_sync(big, Tool("list"), goal="a report", call_id="c1")

    async def from_async_code() -> TruncationResult:  # a framework's loop calls sync code
        return account.shape_sync(big, Tool("list"), goal="a chart", call_id="c2")

    nested = asyncio.run(from_async_code())
    assert (plain.value, nested.value) == (
        "list for a report: 500 rows",
        "list for a chart: 500 rows",
    )
    assert plain.summarized and nested.summarized
    assert [r.call_id for r in account.records()] == ["c1", "c2"]


def test_definitions_plan_lists_in_order_within_budget() -> None:
    sizes = {"pinned": 400, "a": 300, "huge": 5_000, "b": 200, "c": 150}
    plan = plan_definitions(sizes, 1_000, always_on=["pinned"])
    assert plan.listed == ["pinned", "a", "b"] and plan.deferred == ["huge", "c"]
    assert plan.tokens == 900 and not plan.over_budget
    everything = plan_definitions(sizes, 10_000)
    assert everything.deferred == [] and everything.tokens == sum(sizes.values())
    tight = plan_definitions(sizes, 100, always_on=["pinned"])
    assert tight.listed == ["pinned"] and tight.over_budget


def test_definitions_plan_from_real_tool_sizes() -> None:
    tools = [Tool(f"tool_{i}", description="does a thing " * (i + 1)) for i in range(10)]
    sizes = [(t.name, count_tokens(json.dumps(t.to_dict()))) for t in tools]
    plan = plan_definitions(sizes, sum(s for _, s in sizes[:4]))
    assert plan.listed == [t.name for t in tools[:4]]


def test_definitions_plan_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="budget"):
        plan_definitions({"a": 1}, -1)
    with pytest.raises(ConfigError, match="'a'"):
        plan_definitions({"a": -5}, 10)
    with pytest.raises(ConfigError, match="ghost"):
        plan_definitions({"a": 1}, 10, always_on=["ghost"])
