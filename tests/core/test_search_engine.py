"""SearchEngine: the search side of a catalog, usable on its own and delegated to by it."""

from __future__ import annotations

from typing import Any

import pytest

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._model.errors import BrowseError, SearchError
from toolmgmt_core._search import SearchEngine
from toolmgmt_core._search.engine import check_scope
from toolmgmt_core._search.hybrid import FusionWeights
from toolmgmt_core._search.index import BM25Index
from toolmgmt_core._search.params import SearchRequest


def _tools() -> list[Tool]:
    return [
        Tool("send_email", "Send an email message.", domain="mail", group="outbox"),
        Tool("refund_charge", "Give a customer's money back.", domain="payments", group="charges"),
        Tool("list_invoices", "List the invoices of a customer.", domain="payments", group="bills"),
    ]


def test_the_catalog_delegates_to_its_engine() -> None:
    catalog = ToolCatalog(_tools())
    engine = catalog.search_engine
    assert isinstance(engine, SearchEngine)
    hits = catalog.search("email a message", limit=2)
    assert [(h.name, h.score) for h in hits] == [
        (tool.name, score) for tool, score in engine.search(SearchRequest("email a message", 2))
    ]
    assert catalog.suggest("send_emial") == engine.suggest("send_emial")
    assert [h.name for h in catalog.search_regex("^list_")] == ["list_invoices"]


def test_an_engine_follows_the_tools_it_is_told_changed() -> None:
    tools = _tools()
    engine = SearchEngine(lambda: list(tools))
    assert engine.search(SearchRequest("refund money"))[0][0].name == "refund_charge"
    tools.append(Tool("book_flight", "Book a flight ticket.", domain="travel"))
    assert all(t.name != "book_flight" for t, _ in engine.search(SearchRequest("book a flight")))
    engine.changed()
    assert engine.search(SearchRequest("book a flight"))[0][0].name == "book_flight"


def test_adding_to_the_catalog_reaches_the_engine() -> None:
    catalog = ToolCatalog(_tools())
    assert catalog.search("flight") == []
    catalog.add(Tool("book_flight", "Book a flight ticket.", domain="travel"))
    assert catalog.search("flight")[0].name == "book_flight"
    catalog.remove("book_flight")
    assert catalog.search("flight") == []


def test_fusion_weights_are_read_and_set_through_the_catalog() -> None:
    catalog = ToolCatalog(_tools())
    weights = FusionWeights(dense=2.0)
    catalog.fusion = weights
    assert catalog.search_engine.fusion is weights and catalog.fusion is weights
    assert catalog.embedder is None and catalog.embedding_cache is None
    assert catalog.embedder_error is None


def test_scope_and_query_errors_name_what_is_valid() -> None:
    tools = _tools()
    with pytest.raises(BrowseError, match="Valid domains: mail, payments"):
        check_scope(tools, "crm", None)
    with pytest.raises(BrowseError, match="Valid groups: bills, charges"):
        check_scope(tools, "payments", "outbox")
    check_scope(tools, "payments", "bills")  # both exist: no error
    engine = SearchEngine(lambda: tools)
    with pytest.raises(BrowseError, match="Unknown domain 'crm'"):
        engine.search(SearchRequest("refund", domain="crm"))
    with pytest.raises(SearchError, match="empty"):
        engine.search(SearchRequest("   "))
    with pytest.raises(SearchError, match="limit"):
        engine.search(SearchRequest("refund", 0))


def test_names_stay_importable_from_the_catalog_module() -> None:
    from toolmgmt_core._catalog.tool_catalog import (
        MAX_REGEX_LENGTH,
        REGEX_TIME_LIMIT,
        normalize_name,
    )

    assert MAX_REGEX_LENGTH == 200 and REGEX_TIME_LIMIT > 0
    assert normalize_name(" Send_Email ") == "send_email"


class _FavourInvoices:
    """A LearnedBoost that lifts list_invoices in keyword search wherever it is eligible."""

    def field(self, index: BM25Index) -> int:
        return index.positions()["list_invoices"]

    def relevance(self, keyword: Any, cosines: Any, floor: float) -> list[None]:
        return [None] * len(keyword)

    def add_keyword(self, field: int, keyword: Any, texts: Any, mask: Any, base: Any) -> None:
        for scores in keyword:
            scores[field] += 100.0

    def add_dense(self, *args: Any) -> None:  # pragma: no cover - no embedder here
        raise AssertionError("no embedder, no fused scores")


def test_what_was_learned_reaches_a_search_only_through_its_boost() -> None:
    tools = _tools()
    engine = SearchEngine(lambda: tools)
    assert engine.search(SearchRequest("customer money back", 1))[0][0].name == "refund_charge"
    engine.learned = _FavourInvoices()
    assert engine.search(SearchRequest("customer money back", 1))[0][0].name == "list_invoices"
    unlearned = SearchRequest("customer money back", 1, learned=False)
    assert engine.search(unlearned)[0][0].name == "refund_charge"
