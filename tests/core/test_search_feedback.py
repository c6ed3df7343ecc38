"""SearchFeedback: which searches led to a successful call (the pairs a conversation teaches)."""

from __future__ import annotations

import pytest

from toolmgmt_core import ToolCatalog
from toolmgmt_core._learning.feedback import SearchFeedback
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_demo import demo_tools


def test_a_successful_call_of_a_tool_a_search_found_teaches_the_search() -> None:
    feedback = SearchFeedback("conv-1")
    feedback.searched("weather in Riga", ["get_weather", "get_forecast"])
    assert feedback.called("get_weather", ok=True) == ("weather in Riga", "get_weather", "conv-1")
    assert feedback.pairs() == [("weather in Riga", "get_weather", "conv-1")]
    assert feedback.pairs() == []  # each once


def test_failed_calls_and_tools_no_search_found_teach_nothing() -> None:
    feedback = SearchFeedback("conv-1")
    feedback.searched("weather in Riga", ["get_weather"])
    assert feedback.called("get_weather", ok=False) is None
    assert feedback.called("send_email", ok=True) is None  # the model knew it already
    assert feedback.pairs() == []
    assert feedback.called("get_weather", ok=True) is not None  # a retry that worked


def test_the_most_recent_search_that_found_the_tool_is_credited_once() -> None:
    feedback = SearchFeedback("conv-1")
    feedback.searched("weather", ["get_weather"])
    feedback.searched("forecast for Paris tomorrow", ["get_forecast", "get_weather"])
    feedback.searched("send a mail", ["send_email"])
    feedback.called("get_weather", ok=True)
    feedback.called("get_weather", ok=True)
    feedback.called("send_email", ok=True)
    assert feedback.pairs() == [
        ("forecast for Paris tomorrow", "get_weather", "conv-1"),
        ("send a mail", "send_email", "conv-1"),
    ]


def test_only_the_last_searches_are_remembered() -> None:
    feedback = SearchFeedback("conv-1", max_searches=2)
    feedback.searched("old search", ["old_tool"])
    feedback.searched("a", ["x"])
    feedback.searched("b", ["y"])
    assert feedback.called("old_tool", ok=True) is None
    with pytest.raises(ValueError, match="conversation"):
        SearchFeedback("")


def test_pairs_from_three_principals_move_the_tool_for_the_next_one() -> None:
    catalog = ToolCatalog(demo_tools(), learning=LearningOptions())
    tool, request = "payments_list_refunds", "my parcel never arrived, sort out the charge"
    assert catalog.search(request)[0].name != tool
    asked = "the parcel never arrived: list the refunds"
    for principal in ("ann", "bob", "cid"):
        feedback = SearchFeedback(f"conversation-of-{principal}")
        feedback.searched(asked, [h.name for h in catalog.search(asked)])
        feedback.searched("delete a file", [h.name for h in catalog.search("delete a file")])
        feedback.called(tool, ok=True)
        pairs = [(*pair, principal) for pair in feedback.pairs()]
        report = catalog.learn(pairs, source="use")
        assert [(r.tool, r.source) for r in report.learned] == [(tool, "use")]
    assert catalog.search(request)[0].name == tool
