"""Search: query splitting, rank fusion, scoping, filter masks, and the catalog's search()."""

from __future__ import annotations

import pytest

from toolmgmt_core import BrowseError, SearchError, Tool, ToolCatalog
from toolmgmt_core._search import cover_rankings, fuse_rankings, split_query


def _tool(name: str, description: str, domain: str = "general", **kw: object) -> Tool:
    return Tool(name=name, description=description, domain=domain, **kw)  # type: ignore[arg-type]


@pytest.fixture
def travel() -> ToolCatalog:
    """Many flight tools and one email tool: a whole-request search drowns the email need."""
    return ToolCatalog(
        [
            _tool("book_flight", "Book a flight ticket between two airports.", "travel"),
            _tool("search_flights", "Search flights between airports on a date.", "travel"),
            _tool("flight_status", "Get the live status of a flight by flight number.", "travel"),
            _tool("cancel_flight", "Cancel a booked flight and request a refund.", "travel"),
            _tool("book_hotel", "Book a hotel room in a city.", "travel"),
            _tool("send_email", "Send an email with a subject and body.", "email"),
            _tool("list_contacts", "List the contacts in the address book.", "crm"),
        ]
    )


# -- split_query ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("book a flight and email the itinerary", ["book a flight", "email the itinerary"]),
        (
            "Find the area of a circle. Then convert 5 EUR to USD.",
            ["Find the area of a circle", "convert 5 EUR to USD"],
        ),
        (
            "Get the weather in Paris, then book a table for two",
            ["Get the weather in Paris", "book a table for two"],
        ),
        (
            "1. list open pull requests 2. merge the green ones\n3) notify the team",
            ["list open pull requests", "merge the green ones", "notify the team"],
        ),
        (
            "First, find a hotel. Second, rent a car; lastly check the forecast",
            ["find a hotel", "rent a car", "check the forecast"],
        ),
        (
            "Send the invoice after that archive the ticket",
            ["Send the invoice", "archive the ticket"],
        ),
        (  # a question word after a comma or "and" opens a new question
            "What is the time in Tokyo and what's the time difference to Paris?",
            ["What is the time in Tokyo", "what's the time difference to Paris"],
        ),
        (
            "Find a vegan recipe, how long it takes to cook, and which wine goes with it",
            ["Find a vegan recipe", "how long it takes to cook", "which wine goes with it"],
        ),
        (
            "Translate 'hi' to French. In addition to that, get the time in London.",
            ["Translate 'hi' to French", "get the time in London"],
        ),
    ],
)
def test_split_query_finds_each_need(text: str, clauses: list[str]) -> None:
    assert split_query(text) == clauses


@pytest.mark.parametrize(
    "text",
    [
        "convert 0.5 meters to feet",  # a decimal point is not a sentence end
        "look up Apple Inc. filings",  # nor an abbreviation before a lower-case word
        "salt and pepper",  # "and" between single words joins nouns
        "check the weather for the next 5 days",  # "next" inside a clause is no connective
        "compare the second quarter",  # nor is an ordinal used as an adjective
        "tell me how many stores sell guitars",  # a question word inside a clause
        "Find restaurants near me, which are open now",  # a relative clause, not a question
        "find out when and where the concert is",  # question words joined by "and"
        "figure out what and how much to order",
        "check if the store is open, and how late",  # "how late" names one thing
        "weather",
    ],
)
def test_split_query_keeps_a_single_need_whole(text: str) -> None:
    assert split_query(text) == [text]


def test_split_query_drops_clauses_without_terms_and_caps_their_number() -> None:
    assert split_query("Send the report. 42.") == ["Send the report"]
    many = ". ".join(f"Task number {i} here" for i in range(30))
    clauses = split_query(many)
    assert len(clauses) == 12
    assert clauses[-1].startswith("Task number 11 here") and "29" in clauses[-1]


# -- fuse_rankings ----------------------------------------------------------------------------


def test_fusion_puts_every_leader_first_then_agreement() -> None:
    whole = [(1, 9.0), (2, 8.0), (3, 7.0)]
    clause_a = [(1, 5.0), (4, 4.0)]
    clause_b = [(5, 6.0), (4, 5.5), (3, 1.0)]
    fused = fuse_rankings([whole, clause_a, clause_b], limit=5)
    # leaders (1 of the whole request, then 5), then 4 (second twice) before 3 (third twice)
    # and 2 (second once); each score is the best raw score the item got
    assert fused == [(1, 9.0), (5, 6.0), (4, 5.5), (3, 7.0), (2, 8.0)]


def test_fusion_without_leaders_is_plain_rrf_and_honours_weights() -> None:
    a = [(1, 1.0), (2, 1.0)]
    b = [(2, 1.0), (1, 1.0)]
    assert [i for i, _ in fuse_rankings([a, b], 2, leaders_first=False)] == [1, 2]
    assert [i for i, _ in fuse_rankings([a, b], 2, weights=[1, 3], leaders_first=False)] == [2, 1]
    with pytest.raises(ValueError, match="2 rankings but 1 weights"):
        fuse_rankings([a, b], 2, weights=[1])


def test_fusion_edge_cases() -> None:
    assert fuse_rankings([], 3) == []
    assert fuse_rankings([[], []], 3) == []
    assert fuse_rankings([[], [(7, 2.0), (8, 1.0)]], 1) == [(7, 2.0)]


# -- cover_rankings ---------------------------------------------------------------------------


def test_cover_rankings_covers_each_need_before_a_second_near_duplicate() -> None:
    # "book a flight and email the itinerary": the whole request and the flight clause hesitate
    # between two flight tools (1, 2); the email clause is sure of tool 9
    whole = [(1, 2.0), (2, 1.99), (3, 1.2), (9, 1.0)]
    flight = [(2, 2.1), (1, 2.09), (3, 1.0)]
    email = [(9, 2.2), (8, 1.0)]
    assert [i for i, _ in cover_rankings([whole, flight, email], 2)] == [1, 9]
    assert [i for i, _ in cover_rankings([whole, flight, email], 3)] == [1, 9, 2]
    # rank fusion gives the flight clause's leader the second slot: the email need is left out
    assert [i for i, _ in fuse_rankings([whole, flight, email], 2)] == [1, 2]


def test_cover_rankings_prefers_a_sure_need_to_a_vague_one() -> None:
    whole = [(1, 2.0), (5, 1.0)]
    sure = [(2, 2.5), (3, 1.0)]  # one clear tool
    vague = [(4, 1.0), (6, 0.99), (7, 0.98), (8, 0.97)]  # a clause that picks nothing out
    assert [i for i, _ in cover_rankings([whole, sure, vague], 2)] == [1, 2]


def test_cover_rankings_edge_cases_and_scores() -> None:
    assert cover_rankings([], 3) == []
    assert cover_rankings([[], [(7, 2.0), (8, 1.0)]], 1) == [(7, 2.0)]
    a = [(1, 1.0), (2, 0.5)]
    b = [(2, 3.0), (3, 0.1)]
    merged = cover_rankings([a, b], 10, candidates=1)
    # items past the candidates follow in rank-fusion order; scores are the best any ranking gave
    assert merged[:2] == [(1, 1.0), (2, 3.0)]
    assert {i for i, _ in merged} == {1, 2, 3}
    for bad in ({"temperature": 0.0}, {"saturation": 0.0}):
        with pytest.raises(ValueError, match="temperature and saturation must be above 0"):
            cover_rankings([a], 2, **bad)


# -- ToolCatalog.search -----------------------------------------------------------------------


def test_a_request_with_two_needs_covers_both(travel: ToolCatalog) -> None:
    request = (
        "book the cheapest flight ticket between the Paris and Rome airports on Friday "
        "and email the itinerary"
    )
    whole_only = [h.name for h in travel.search(request, limit=2, split=False)]
    assert "send_email" not in whole_only  # the flight need drowns the email need...
    split = [h.name for h in travel.search(request, limit=2)]
    assert split == ["book_flight", "send_email"]  # ...unless the request is split


def test_an_explicit_list_of_queries_is_searched_query_by_query(travel: ToolCatalog) -> None:
    hits = travel.search(["flight status", "address book contacts", "flight status"], limit=2)
    assert [h.name for h in hits] == ["flight_status", "list_contacts"]
    with pytest.raises(SearchError, match="empty"):
        travel.search(["  ", ""])
    with pytest.raises(SearchError, match="string or a list of strings"):
        travel.search([1, 2])  # type: ignore[list-item]
    with pytest.raises(SearchError, match="at least 1"):
        travel.search("flight", limit=0)


def test_hits_carry_scores_and_no_unmatched_tools(travel: ToolCatalog) -> None:
    hits = travel.search("refund", limit=5)
    assert [h.name for h in hits] == ["cancel_flight"]
    assert hits[0].score > 0 and hits[0].domain == "travel"
    assert travel.search("zebra quantum") == []
    assert ToolCatalog().search("anything") == []


def test_domain_group_and_where_scope_the_search(travel: ToolCatalog) -> None:
    assert {h.domain for h in travel.search("book", domain="travel", limit=10)} == {"travel"}
    assert travel.search("email", domain="travel") == []
    hits = travel.search("flight", limit=10, where=lambda t: "status" not in t.name)
    assert "flight_status" not in [h.name for h in hits] and hits
    assert travel.search("email", group="general")[0].name == "send_email"
    with pytest.raises(BrowseError, match="Valid domains: crm, email, travel"):
        travel.search("flight", domain="space")
    with pytest.raises(BrowseError, match="Valid groups: general"):
        travel.search("flight", domain="travel", group="nope")


class _CountingFilter:
    """A visibility predicate that counts its calls; ``cache_key`` opts into mask caching."""

    def __init__(self, cache_key: object = None) -> None:
        self.calls = 0
        if cache_key is not None:
            self.cache_key = cache_key

    def __call__(self, tool: Tool) -> bool:
        self.calls += 1
        return tool.domain != "crm"


def test_where_masks_are_cached_only_when_the_filter_says_how(travel: ToolCatalog) -> None:
    plain = _CountingFilter()
    travel.search("contacts", where=plain)
    travel.search("contacts", where=plain)
    assert plain.calls == 2 * len(travel)  # may change between calls: asked every time

    keyed = _CountingFilter(cache_key=("policy", 1))
    assert travel.search("contacts", where=keyed) == []
    travel.search("flight", where=keyed)
    assert keyed.calls == len(travel)  # one mask per catalog version and key
    travel.add(_tool("export_contacts", "Export contacts to CSV.", "files"))
    assert [h.name for h in travel.search("contacts", where=keyed)] == ["export_contacts"]
    assert keyed.calls == 2 * len(travel) - 1  # the catalog changed: asked again


def test_the_index_follows_changes(travel: ToolCatalog) -> None:
    assert travel.search("weather") == []
    travel.add(_tool("get_forecast", "Weather forecast for a city.", "web"))
    assert travel.search("weather")[0].name == "get_forecast"
    travel.remove("get_forecast")
    assert travel.search("weather") == []


def test_fields_names_parameters_enums_and_keywords_are_searched() -> None:
    catalog = ToolCatalog(
        [
            _tool("convertTemperature", "Convert between units."),
            _tool(
                "render_chart",
                "Draw a chart.",
                parameters={
                    "type": "object",
                    "properties": {
                        "chart_kind": {"type": "string", "enum": ["histogram", "scatter"]},
                        "palette": {"type": "string", "description": "A colourblind palette."},
                    },
                },
            ),
            _tool("lookup", "Look up an entry.", keywords=("thesaurus",)),
        ]
    )
    assert catalog.search("temperature")[0].name == "convertTemperature"
    assert catalog.search("histogram")[0].name == "render_chart"
    assert catalog.search("colourblind")[0].name == "render_chart"
    assert catalog.search("chart kind")[0].name == "render_chart"
    assert catalog.search("thesaurus")[0].name == "lookup"


def test_a_name_match_outweighs_a_description_match() -> None:
    catalog = ToolCatalog(
        [
            _tool("archive_ticket", "Move a support issue out of the queue."),
            _tool("close_issue", "Close it; the ticket is archived separately."),
        ]
    )
    assert catalog.search("ticket")[0].name == "archive_ticket"


def test_search_modules_export_what_they_define() -> None:
    import importlib

    for name in ("bm25", "engine", "fusion", "fuzzy", "hybrid", "index", "query", "tokenize"):
        module = importlib.import_module(f"toolmgmt_core._search.{name}")
        assert module.__all__ and all(hasattr(module, n) for n in module.__all__), name
    package = importlib.import_module("toolmgmt_core._search")
    assert all(hasattr(package, n) for n in package.__all__)
    assert {"split_query", "fuse_rankings", "BM25Index", "NameMatcher", "SearchEngine"} <= set(
        package.__all__
    )
