"""Bounded influence in hybrid search (issue 35): learned evidence reorders the tools a request
reaches by their keyword score OR by their embedding, never one it reaches by neither."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import teaching
from support.embedders import HashingEmbedder

from toolmgmt_core import ToolCatalog
from toolmgmt_core._learning.ranking import LearnedWeights
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_demo import demo_tools

TOOLS = demo_tools()
REQUEST = "the parcel never arrived"
"""A request whose words only ``payments_create_charge`` holds (keyword search finds no other)."""
BY_EMBEDDING = "files_restore_version"
"""A tool the request reaches only by its embedding (the test embedder's cosine, well above
the fusion floor)."""
BY_NEITHER = "payments_get_charge"
"""A tool the request reaches by neither (no shared word, a cosine below the fusion floor)."""


def _names(catalog: ToolCatalog, query: str, limit: int = 5) -> list[str]:
    return [h.name for h in catalog.search(query, limit)]


def _teach(catalog: ToolCatalog, tool: str, principals: int) -> None:
    catalog.learn([(REQUEST, tool, f"conversation-{p}", f"user-{p}") for p in range(principals)])


def test_base_relevance_is_a_keyword_or_a_dense_score_above_its_floor() -> None:
    weights = LearnedWeights(floor=0.2, dense_floor=0.5)
    keyword = np.array([10.0, 1.0, 0.0, 0.0, 3.0, 0.0])
    # fusion floor 0.1: the best cosine is 0.4 above it, so a cosine counts from 0.3
    cosine = np.array([0.5, 0.12, 0.35, 0.25, 0.05, 0.31])
    everything = np.arange(6)
    hybrid = weights.relevance(keyword, cosine, 0.1)
    assert hybrid.at(everything).tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    keyword_only = weights.relevance(keyword, None, 0.1)
    assert keyword_only.at(everything).tolist() == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    # judged on the scores before anything learned is added to them
    keyword[1] = 100.0
    assert hybrid.at(everything).tolist()[1] == 0.0
    # no cosine above the fusion floor: the dense side reaches nothing
    nothing = weights.relevance(np.zeros(3), np.array([0.1, 0.05, 0.0]), 0.1)
    assert nothing.at(np.arange(3)).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dense_floor", 1.5, "between 0 and 1"),
        ("floor", -0.1, ">= 0"),
        ("dense", float("nan"), ">= 0"),
        ("keyword", "1", ">= 0"),
    ],
)
def test_weights_out_of_range_are_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=f"LearnedWeights.{field} must be .*{message}"):
        LearnedWeights(**{field: value})  # type: ignore[arg-type]


def test_hybrid_learning_reorders_a_tool_the_request_reaches_only_by_its_embedding() -> None:
    embedder = HashingEmbedder()
    plain = ToolCatalog(TOOLS, embedder=embedder)
    keyword_plain = ToolCatalog(TOOLS)
    assert BY_EMBEDDING not in _names(keyword_plain, REQUEST, 200)  # no keyword score
    assert BY_EMBEDDING in _names(plain, REQUEST, 30)  # but the embedding reaches it
    assert BY_EMBEDDING not in _names(plain, REQUEST)

    learning = ToolCatalog(TOOLS, embedder=embedder, learning=LearningOptions())
    _teach(learning, BY_EMBEDDING, 3)
    assert _names(learning, REQUEST, 1) == [BY_EMBEDDING]
    # keyword search alone still has no base relevance for it: the same evidence moves nothing
    keyword_learning = ToolCatalog(TOOLS, learning=LearningOptions())
    _teach(keyword_learning, BY_EMBEDDING, 3)
    assert keyword_learning.search(REQUEST, 10) == keyword_plain.search(REQUEST, 10)


def test_hybrid_learning_cannot_lift_a_tool_the_request_reaches_by_neither() -> None:
    embedder = HashingEmbedder()
    plain = ToolCatalog(TOOLS, embedder=embedder)
    assert BY_NEITHER not in _names(ToolCatalog(TOOLS), REQUEST, 200)
    assert BY_NEITHER not in _names(plain, REQUEST, 100)
    learning = ToolCatalog(TOOLS, embedder=embedder, learning=LearningOptions())
    _teach(learning, BY_NEITHER, 10)
    assert learning.learned_terms(BY_NEITHER)  # learned, by ten principals
    assert learning.search(REQUEST, 10) == plain.search(REQUEST, 10)
    assert BY_NEITHER not in _names(learning, REQUEST, 100)


TAUGHT = [
    "payments_refund_charge",
    "files_read_file",
    "files_delete_file",
    "web_search_fetch_page",
    "email_send_email",
    "crm_list_deals",
    BY_EMBEDDING,
    BY_NEITHER,
]
"""Few tools, so that two principals often teach one of them the same words."""
WORDS = [*teaching.WORDS, "restore"]
"""The shared words, and one that reaches the tool only its embedding reaches."""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=teaching.teachings(TAUGHT, WORDS),
    requests=st.lists(teaching.requests(WORDS), max_size=4),
)
def test_in_hybrid_search_fewer_principals_than_the_threshold_change_no_ranking(
    pairs: list[tuple[str, str, str, str]], requests: list[str]
) -> None:
    embedder = HashingEmbedder()
    plain = ToolCatalog(TOOLS, embedder=embedder)
    learning = ToolCatalog(TOOLS, embedder=embedder, learning=LearningOptions(destructive=True))
    learning.learn(pairs, source="use")  # min_principals 3: two principals, any conversations
    for request in requests:
        assert learning.search(request, 10) == plain.search(request, 10)
