"""Examples for truncation strategies, MCP results and summarisation."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import math
import threading
import time

import pytest

import toolmgmt_core._calls.truncation.fit as truncation_fit
from toolmgmt_core import (
    ConfigError,
    TruncationResult,
    summarize_result,
    truncate_result,
)
from toolmgmt_core._calls.truncation import (
    MIN_RESULT_TOKENS,
    render_result,
    summarize_result_sync,
)
from toolmgmt_core._model.tokens import count_tokens


def _records(n: int) -> list[dict]:
    return [
        {"id": i, "name": f"user {i}", "email": f"u{i}@example.com", "bio": "lorem ipsum " * 10}
        for i in range(n)
    ]


def _omitted(marker: str) -> int:
    return int(marker.split()[1].replace(",", ""))


# -- strategies -------------------------------------------------------------------------------


def test_fitting_values_come_back_untouched() -> None:
    value = {"a": [1, 2, 3], "b": "text"}
    result = truncate_result(value, 100)
    assert result.value is value and not result.truncated
    assert result.text == '{"a":[1,2,3],"b":"text"}'
    assert result.tokens == result.original_tokens == count_tokens(result.text)


def test_smart_keeps_first_and_last_items_with_a_counted_marker() -> None:
    records = _records(10_000)
    result = truncate_result(records, 2_000)
    assert result.truncated and result.tokens <= 2_000
    assert result.original_tokens == count_tokens(render_result(records))
    out = result.value
    markers = [x for x in out if isinstance(x, str)]
    assert len(markers) == 1 and markers[0].startswith("… ") and "items omitted" in markers[0]
    kept = [x for x in out if isinstance(x, dict)]
    assert _omitted(markers[0]) == 10_000 - len(kept)
    assert out[0] == records[0] and out[-1] == records[-1]  # small records stay whole
    head = out[: out.index(markers[0])]
    assert [r["id"] for r in head] == list(range(len(head)))
    assert 0.9 * 2_000 <= result.tokens  # the budget is used, not wasted


def test_smart_keeps_every_key_and_cuts_long_strings_in_the_middle() -> None:
    doc = {
        "title": "Quarterly report",
        "body": "start " + "x" * 20_000 + " end",
        "tags": ["a", "b"],
        "meta": {"pages": 12, "author": "Ada"},
    }
    result = truncate_result(doc, 120)
    out = result.value
    assert list(out) == list(doc)
    assert out["title"] == doc["title"] and out["meta"] == doc["meta"]
    body = out["body"]
    assert body.startswith("start ") and body.endswith(" end")
    head, _, rest = body.partition(" … ")
    marker, _, tail = rest.partition(" … ")
    omitted = _omitted("… " + marker)
    assert len(head) + omitted + len(tail) == len(doc["body"])


def test_head_and_tail_keep_their_end() -> None:
    items = list(range(5_000))
    head = truncate_result(items, 50, "head").value
    tail = truncate_result(items, 50, "tail").value
    assert head[0] == 0 and isinstance(head[-1], str) and "omitted" in head[-1]
    assert tail[-1] == 4_999 and isinstance(tail[0], str) and "omitted" in tail[0]
    assert head[:-1] == list(range(len(head) - 1))
    text = "begin " + "word " * 10_000 + "finish"
    assert truncate_result(text, 40, "head").value.startswith("begin ")
    assert truncate_result(text, 40, "tail").value.endswith("finish")
    smart = truncate_result(text, 40, "smart").value
    assert smart.startswith("begin ") and smart.endswith("finish") and "chars omitted" in smart


def test_plain_text_is_cut_on_line_breaks_when_near() -> None:
    log = "\n".join(f"line {i}: something happened" for i in range(5_000))
    out = truncate_result(log, 200).value
    head, _, tail = out.partition(" … ")
    assert head.endswith("\n") and tail.split(" … ", 1)[1].startswith("line ")


def test_deep_nesting_collapses_to_a_marker() -> None:
    deep: dict = {"leaf": "x" * 5_000}
    for i in range(30):
        deep = {f"level{i}": deep, "pad": "y" * 100}
    result = truncate_result(deep, 400, max_depth=5)
    assert result.tokens <= 400
    node = result.value
    for _ in range(5):
        node = next(v for k, v in node.items() if k.startswith("level"))
    assert node == {"…": "2 keys omitted"} or node == {"…": "…"}


def test_json_text_is_cut_as_json_and_stays_a_string() -> None:
    text = json.dumps({"rows": _records(2_000), "total": 2_000}, indent=2)
    result = truncate_result(text, 300)
    assert isinstance(result.value, str) and result.tokens <= 300
    parsed = json.loads(result.value)
    assert parsed["total"] == 2_000 and "omitted" in json.dumps(parsed["rows"], ensure_ascii=False)


def test_values_that_are_not_json_are_converted() -> None:
    value = {"when": dt.date(2024, 1, 2), "ids": {3}, "nan": math.nan, 1: b"\x00" * 10}
    result = truncate_result(value, 100)
    assert json.loads(result.text) == {
        "when": "2024-01-02",
        "ids": [3],
        "nan": "nan",
        "1": "<10 bytes>",
    }


@pytest.mark.parametrize("text", ["[NaN" + ",1" * 300 + "]", "[1e999" + ",2" * 300 + "]"])
def test_json_text_with_non_json_numbers_is_cut_as_text(text) -> None:
    result = truncate_result(text, 16)
    assert result.tokens <= 16 and result.value.startswith(text[:4])


def test_circular_values_are_rendered_not_looped() -> None:
    value: dict = {"name": "loop", "rows": list(range(1_000))}
    value["self"] = value
    result = truncate_result(value, 40)
    assert result.tokens <= 40 and json.loads(result.text)["self"] == "<circular reference>"


def test_marker_key_never_collides_with_a_real_key() -> None:
    value = {"…": 1, **{f"k{i}": "v" * 40 for i in range(200)}}
    out = truncate_result(value, 60, "head").value
    assert out["…"] == 1 and "keys omitted" in out["……"]


@pytest.mark.parametrize("budget", [0, 15, -3, 2.5, True, "100"])
def test_budgets_under_the_minimum_are_refused(budget) -> None:
    with pytest.raises(ConfigError, match=str(MIN_RESULT_TOKENS)):
        truncate_result("x", budget)


def test_unknown_strategy_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="'head', 'tail' or 'smart'"):
        truncate_result("x", 100, "middle")


def test_ten_megabytes_are_tokenised_once(monkeypatch) -> None:
    calls: list[int] = []
    original = truncation_fit.counter

    def counting(enc):
        count = original(enc)

        def wrapped(text: str) -> int:
            calls.append(len(text))
            return count(text)

        return wrapped

    monkeypatch.setattr(truncation_fit, "counter", counting)
    records = _records(60_000)  # ~10 MB of JSON
    size = len(render_result(records))
    result = truncate_result(records, 2_000)
    assert result.tokens <= 2_000
    assert calls[0] == size and all(n < size // 100 for n in calls[1:]) and len(calls) <= 13


# -- summarisation ----------------------------------------------------------------------------


def run_async(test):
    """Run an async test in its own event loop (no asyncio plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


BIG = {"rows": _records(300)}


@run_async
async def test_sync_summariser_gets_the_text_tool_name_and_goal() -> None:
    seen = {}

    def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        seen.update(text=text, tool_name=tool_name, goal=goal)
        return "300 users, all with example.com addresses."

    result = await summarize_result(BIG, summarise, 200, tool_name="list_users", goal="count")
    assert result.summarized and result.truncated and result.note is None
    assert result.value == "300 users, all with example.com addresses."
    assert seen == {"text": render_result(BIG), "tool_name": "list_users", "goal": "count"}
    assert result.original_tokens == count_tokens(render_result(BIG))


@run_async
async def test_async_summariser_and_a_long_summary_is_capped() -> None:
    async def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        await asyncio.sleep(0)
        return "summary " * 2_000

    result = await summarize_result(BIG, summarise, 50, tool_name="t")
    assert result.summarized and result.tokens <= 50 and "omitted" in result.value
    assert result.note == "summary cut to the budget"


@run_async
async def test_failing_summariser_falls_back_to_truncation_and_says_why() -> None:
    def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        raise RuntimeError("model overloaded")

    result = await summarize_result(BIG, summarise, 200, tool_name="t")
    assert not result.summarized and result.truncated and result.tokens <= 200
    assert result.note == "SummaryFailed: RuntimeError: model overloaded"
    assert result.value == truncate_result(BIG, 200).value


@run_async
async def test_slow_summariser_times_out_into_truncation() -> None:
    async def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        await asyncio.sleep(120)
        return "late"

    started = time.perf_counter()
    result = await summarize_result(BIG, summarise, 200, tool_name="t", timeout=0.05)
    assert time.perf_counter() - started < 60  # did not wait for it (a generous bound)
    assert result.note == "SummaryFailed: timed out after 0.05 s" and not result.summarized
    assert result.tokens <= 200


def test_slow_sync_summariser_times_out_on_the_sync_paths_too() -> None:
    # asyncio.run waits for its default executor on exit: the summariser must not run there.
    release = threading.Event()

    def summarise(text: str, *, tool_name: str, goal: str | None) -> str:
        release.wait(120)
        return "late"

    try:
        started = time.perf_counter()
        result = summarize_result_sync(BIG, summarise, 200, tool_name="t", timeout=0.05)
        assert time.perf_counter() - started < 60  # did not wait for it (a generous bound)
        assert result.note == "SummaryFailed: timed out after 0.05 s" and result.tokens <= 200
        started = time.perf_counter()
        result = asyncio.run(summarize_result(BIG, summarise, 200, tool_name="t", timeout=0.05))
        assert time.perf_counter() - started < 60 and not result.summarized
    finally:
        release.set()


@run_async
async def test_summariser_returning_no_text_is_a_failure() -> None:
    result = await summarize_result(BIG, lambda text, **kw: None, 200, tool_name="t")
    assert result.note == "SummaryFailed: the summariser returned NoneType, expected text"


@run_async
async def test_results_under_the_threshold_are_not_summarised() -> None:
    calls = []

    def summarise(text: str, **kwargs) -> str:
        calls.append(text)
        return "s"

    small = await summarize_result({"a": 1}, summarise, 200, tool_name="t")
    big_but_under = await summarize_result(BIG, summarise, 200, tool_name="t", threshold=10**6)
    assert calls == [] and small.value == {"a": 1}
    assert big_but_under.truncated and big_but_under.strategy == "smart"


@run_async
async def test_summariser_reads_a_capped_input_when_asked() -> None:
    lengths = []

    def summarise(text: str, **kwargs) -> str:
        lengths.append(count_tokens(text))
        return "ok"

    await summarize_result(BIG, summarise, 100, tool_name="t", input_tokens=500)
    assert lengths and lengths[0] <= 500


@run_async
async def test_sync_bridge_works_inside_a_running_loop() -> None:
    async def summarise(text: str, **kwargs) -> str:
        return "bridged"

    result = summarize_result_sync(BIG, summarise, 100, tool_name="t")
    assert isinstance(result, TruncationResult) and result.value == "bridged"
