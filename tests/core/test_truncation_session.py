"""Result budgets end to end: the demo catalog's large results through a session."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest

from toolmgmt_core import ConfigError, ResultBudget, ToolManager, count_tokens
from toolmgmt_core._calls.truncation import render_result
from toolmgmt_demo import LARGE_RESULT_CALLS, demo_catalog


@pytest.fixture(scope="module")
def catalog():
    return demo_catalog()


@pytest.fixture(scope="module")
def raw_results(catalog):
    """The large results as the handlers return them, without a session."""
    out = {}
    for name, arguments in LARGE_RESULT_CALLS:
        tool = catalog.get(name)
        value = tool.handler(**arguments)
        out[name] = asyncio.run(value) if inspect.isawaitable(value) else value
    return out


@pytest.mark.parametrize(("name", "arguments"), LARGE_RESULT_CALLS)
def test_large_demo_results_are_cut_to_budget_and_stay_parseable(
    catalog, raw_results, name, arguments
) -> None:
    manager = ToolManager(catalog, mode="gateway", results=ResultBudget(max_result_tokens=1_500))
    session = manager.session()
    result = session.call_sync("execute_tool", {"tool_name": name, "arguments": arguments})
    assert not result.is_error, result.content
    tool = catalog.get(name)
    budget = tool.max_result_tokens or 1_500
    original = count_tokens(render_result(raw_results[name]))
    assert original > budget  # the demo result really is large
    assert result.truncated and result.original_tokens == original
    assert result.tokens == count_tokens(result.content) <= budget
    if not isinstance(raw_results[name], str):
        assert json.loads(result.content) == json.loads(render_result(result.value))
    assert "omitted" in result.content


def test_small_results_pass_untouched(catalog) -> None:
    session = ToolManager(catalog, always_on=["calendar_list_calendars"]).session()
    result = session.call_sync("calendar_list_calendars", {})
    assert not result.is_error and not result.truncated
    assert result.tokens == result.original_tokens == count_tokens(result.content)


def test_tool_budget_and_strategy_override_the_manager(catalog, raw_results) -> None:
    name, arguments = LARGE_RESULT_CALLS[0]
    tool = catalog.get(name).replace(max_result_tokens=200, truncation="tail")
    catalog_copy = demo_catalog()
    catalog_copy.remove(name)
    catalog_copy.add(tool)
    session = ToolManager(
        catalog_copy, always_on=[name], results=ResultBudget(max_result_tokens=5_000)
    ).session()
    result = session.call_sync(name, arguments)
    assert result.truncated and result.tokens <= 200
    content = result.value["content"]  # tail keeps the end of the file
    assert content.endswith(raw_results[name]["content"][-40:])
    assert "chars omitted … " in content and not content.startswith(
        raw_results[name]["content"][:40]
    )


def test_session_budget_cuts_harder_and_reports_clearable_results(catalog) -> None:
    names = [name for name, _ in LARGE_RESULT_CALLS]
    manager = ToolManager(
        catalog,
        always_on=names,
        results=ResultBudget(max_result_tokens=1_000, session_tokens=2_500),
    )
    session = manager.session()
    tokens = []
    for i, (name, arguments) in enumerate(LARGE_RESULT_CALLS[:4]):
        tokens.append(session.call_sync(name, arguments, call_id=f"toolu_{i}").tokens)
    assert tokens[0] > 900 and tokens[3] <= 500  # the session budget was spent: halved
    clearable = session.clearable_results()
    assert clearable and all(r.call_id != "toolu_3" for r in clearable)
    assert clearable[0].tokens == max(r.tokens for r in clearable)
    freed = session.mark_results_cleared([r.call_id for r in clearable])
    assert freed == sum(r.tokens for r in clearable)
    assert session.result_budget.used <= 2_500

    restored = manager.session(session.to_json())
    assert restored.result_budget.used == session.result_budget.used
    assert restored.clearable_results() == []


def test_summariser_through_the_session_and_its_fallback(catalog) -> None:
    name, arguments = LARGE_RESULT_CALLS[1]
    seen = []

    async def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        seen.append((tool_name, goal, len(text)))
        if goal == "break":
            raise RuntimeError("summariser down")
        return f"{tool_name}: many events"

    manager = ToolManager(
        catalog, always_on=[name], results=ResultBudget(max_result_tokens=500, summarizer=summarise)
    )
    session = manager.session()
    session.goal = "how many signups"
    summary = asyncio.run(session.call(name, arguments))
    assert summary.content == f"{name}: many events" and summary.truncated
    assert seen[0][:2] == (name, "how many signups") and seen[0][2] > 10_000
    session.goal = "break"
    fallback = session.call_sync(name, arguments)
    assert fallback.truncated and fallback.tokens <= (catalog.get(name).max_result_tokens or 500)
    assert fallback.note == "SummaryFailed: RuntimeError: summariser down"
    json.loads(fallback.content)


def test_bad_budget_options_fail_when_the_manager_is_built(catalog) -> None:
    with pytest.raises(ConfigError, match="at least 16"):
        ToolManager(catalog, results=ResultBudget(max_result_tokens=3))
    with pytest.raises(ConfigError, match="'head', 'tail' or 'smart'"):
        ToolManager(catalog, results=ResultBudget(strategy="middle"))
