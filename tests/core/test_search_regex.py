"""Regex search stays bounded on hostile patterns; suggest finds misspelled names fast."""

from __future__ import annotations

import time

import pytest

from toolmgmt_core import SearchError, Tool, ToolCatalog
from toolmgmt_core._catalog.tool_catalog import MAX_REGEX_LENGTH, REGEX_TIME_LIMIT
from toolmgmt_core._search.fuzzy import NameMatcher


@pytest.fixture
def hostile() -> ToolCatalog:
    """Descriptions made of long runs of one letter: the worst case for nested repetition."""
    return ToolCatalog(
        [Tool(name=f"tool_{i}", description="a" * (30 + i) + "b", domain="d") for i in range(200)]
        + [Tool(name="get_weather", description="Weather forecast.", domain="web")]
    )


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(a|a?)+$", r"(.*a){12}$"])
def test_a_pathological_pattern_returns_within_a_bound(hostile: ToolCatalog, pattern: str) -> None:
    start = time.monotonic()
    try:
        hits = hostile.search_regex(pattern)
    except SearchError as exc:  # stopped at the time limit, with a clear message
        assert "took longer than" in str(exc) and "(a+)+" in str(exc)
    else:
        assert all(h.name.startswith("tool_") for h in hits)
    assert time.monotonic() - start < REGEX_TIME_LIMIT + 30  # does not hang (a generous bound)


def test_regex_matches_names_descriptions_and_domains(hostile: ToolCatalog) -> None:
    assert [h.name for h in hostile.search_regex("^get_")] == ["get_weather"]
    assert [h.name for h in hostile.search_regex("FORECAST")] == ["get_weather"]  # any case
    assert [h.name for h in hostile.search_regex("^web$")] == ["get_weather"]
    names = [h.name for h in hostile.search_regex(r"weather|tool_1\b")]
    assert names[0] == "get_weather" or names[0] == "tool_1"
    assert {h.score for h in hostile.search_regex("weather")} == {2.0}  # a name match
    assert hostile.search_regex("tool_", limit=3, domain="d")[2].name == "tool_2"


def test_overlong_invalid_and_empty_patterns_are_refused(hostile: ToolCatalog) -> None:
    with pytest.raises(SearchError, match=f"at most {MAX_REGEX_LENGTH}"):
        hostile.search_regex("a" * (MAX_REGEX_LENGTH + 1))
    assert hostile.search_regex("x" * MAX_REGEX_LENGTH) == []  # the limit itself is fine
    for bad in ("(unclosed", "[z-a]", "*start", "a{2,1}"):
        with pytest.raises(SearchError, match="does not compile"):
            hostile.search_regex(bad)
    with pytest.raises(SearchError, match="empty"):
        hostile.search_regex("")


def test_suggest_finds_misspellings_case_and_lookalikes() -> None:
    names = ["send_email", "sendInvoice", "get_weather_forecast", "list_calendar_events"]
    catalog = ToolCatalog([Tool(name=n) for n in names])
    assert catalog.suggest("send_emial")[0] == "send_email"
    assert catalog.suggest("SEND-EMAIL") == ["send_email"]  # folded exact match: alone
    assert catalog.suggest("ｓｅｎｄ＿ｅｍａｉｌ") == ["send_email"]  # full-width look-alikes
    assert catalog.suggest("getWeatherForcast")[0] == "get_weather_forecast"
    assert catalog.suggest("calendar")[0] == "list_calendar_events"  # a fragment
    assert catalog.suggest("zzzzzz") == []
    hidden = catalog.suggest("send_emial", where=lambda t: t.name != "send_email")
    assert "send_email" not in hidden


def test_suggest_finds_the_closest_of_a_large_catalog() -> None:
    # Its speed (a shortlist, then difflib) is bench/search_speed.py's to measure.
    verbs = ["get", "list", "create", "update", "delete", "send", "archive", "sync"]
    nouns = ["invoice", "customer", "ticket", "meeting", "report", "payment", "order", "file"]
    names = [f"{v}_{n}_{i}" for i in range(160) for v in verbs for n in nouns]  # 10,240
    matcher = NameMatcher(names)
    assert matcher.closest("sned_invoice_42", 1) == ["send_invoice_42"]
    assert matcher.closest("archve_payment_7", 1) == ["archive_payment_7"]
    assert matcher.closest("delete_tickte_150", 1) == ["delete_ticket_150"]
    assert matcher.closest("sync_file_99", 1) == ["sync_file_99"]
