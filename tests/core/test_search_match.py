"""Match features: the field bits of the postings, each feature's value, the learnt scoring on
top of BM25, and the cheaper ways the ranking now takes (the same results as the slow ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._search import MATCH_FEATURES, MATCH_WEIGHTS, BM25Index, split_query
from toolmgmt_core._search import match as match_module
from toolmgmt_core._search.bm25 import BM25Matrix
from toolmgmt_core._search.index import FIELD_BITS
from toolmgmt_core._search.match import MATCH_DEPTH, MATCH_FLOOR, request_kinds


def _tool(name: str, description: str, **params: str) -> Tool:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return Tool(name, description, parameters={"type": "object", "properties": properties})


FILLER = [
    _tool("get_weather", "Get the current weather in a city.", city="The city."),
    _tool("send_email", "Send an email to a contact.", to="Who gets it."),
    _tool("list_files", "List the files in a folder.", folder="The folder."),
    _tool("create_invoice", "Create an invoice for a customer.", customer="Who pays."),
]


def test_the_field_bits_match_the_index_fields() -> None:
    assert match_module._NAME == FIELD_BITS["name"]
    assert match_module._DESCRIPTION == FIELD_BITS["description"]
    assert match_module._PARAMETERS == FIELD_BITS["parameters"]
    assert (
        match_module._PURPOSE
        == FIELD_BITS["name"] | FIELD_BITS["keywords"] | (FIELD_BITS["description"])
    )
    assert match_module._NAME_WORD not in FIELD_BITS.values()
    assert set(MATCH_WEIGHTS) == set(MATCH_FEATURES) and MATCH_WEIGHTS["bm25"] == 1.0


def test_postings_keep_the_union_of_their_fields_and_the_same_scores() -> None:
    docs = np.array([0, 0, 0, 1, 1, 2])
    terms = ["ticket", "ticket", "refund", "ticket", "refund", "refund"]
    fields = np.array([1, 8, 8, 16, 1, 2], dtype=np.uint8)
    weights = np.array([3.0, 1.0, 1.0, 1.0, 3.0, 1.0])
    plain = BM25Matrix.from_terms(docs, terms, 3, weights=weights)
    marked = BM25Matrix.from_terms(docs, terms, 3, weights=weights, fields=fields)
    np.testing.assert_array_equal(plain.data, marked.data)
    assert plain.fields is None and marked.fields is not None
    ticket, refund = marked.vocab["ticket"], marked.vocab["refund"]
    got = {}
    for row, term in ((ticket, "ticket"), (refund, "refund")):
        for pos in range(marked.indptr[row], marked.indptr[row + 1]):
            got[(term, int(marked.indices[pos]))] = int(marked.fields[pos])
    assert got == {
        ("ticket", 0): 1 | 8,
        ("ticket", 1): 16,
        ("refund", 0): 8,
        ("refund", 1): 1,
        ("refund", 2): 2,
    }
    positions, which = marked.postings([refund, ticket])
    assert list(marked.indices[positions]) == [0, 1, 2, 0, 1]
    assert list(which) == [0, 0, 0, 1, 1]
    assert marked.idf is not None and marked.idf[ticket] > marked.idf[refund]


@pytest.fixture
def flights() -> BM25Index:
    return BM25Index.build(
        [
            *FILLER,
            _tool("book_flight", "Book a plane ticket.", date="Day of travel, YYYY-MM-DD."),
            _tool("flight_status", "Status of a flight."),
            _tool("book_1_flight", "Reserve a seat.", booking="A booking."),
        ]
    )


def test_each_feature_is_what_its_docstring_says(flights: BM25Index) -> None:
    query = "book a flight on 2024-05-01"
    candidates, features = flights.match_features(query)
    names = [flights.tools[i].name for i in candidates]
    assert set(names) == {"book_flight", "flight_status", "book_1_flight"}
    matrix = flights._matrix
    assert matrix.idf is not None
    idf = {t: float(matrix.idf[matrix.vocab[t]]) for t in ("book", "flight", "status")}
    total = idf["book"] + idf["flight"]  # "2024", "05", "01" are in no tool: not counted
    by_name = {
        name: dict(zip(MATCH_FEATURES, features[:, i], strict=True)) for i, name in enumerate(names)
    }
    bm25 = flights.scores(query)
    best = bm25.max()
    for i, name in zip(candidates, names, strict=True):
        assert by_name[name]["bm25"] == pytest.approx(bm25[i] / best)
    expected = {
        "book_flight": (1.0, 1.0, 0.0, 1.0, 1.0),
        "flight_status": (
            idf["flight"] / total,
            idf["flight"] / total,
            0.0,
            idf["flight"] / (idf["flight"] + idf["status"]),
            0.0,
        ),
        # "1" is a number: no part of the name's mass; "booking" is a parameter word
        "book_1_flight": (1.0, 1.0, idf["book"] / total, 1.0, 0.0),
    }
    for name, values in expected.items():
        got = tuple(by_name[name][f] for f in MATCH_FEATURES[1:])
        assert got == pytest.approx(values), name


def test_scores_are_the_weighted_features_on_bm25s_scale(flights: BM25Index) -> None:
    for query in ("book a flight on 2024-05-01", "flight status", "send an email today"):
        candidates, features = flights.match_features(query)
        bm25 = flights.scores(query)
        scores = flights.match_scores(query)
        weights = np.array([MATCH_WEIGHTS[f] for f in MATCH_FEATURES])
        np.testing.assert_allclose(scores[candidates], bm25.max() * (weights @ features))
        rest = np.setdiff1d(np.arange(len(bm25)), candidates)
        np.testing.assert_allclose(scores[rest], bm25[rest])
        assert (scores[bm25 <= 0] == 0).all()


def test_candidates_are_the_best_near_the_top_and_keep_their_lead() -> None:
    # 80 tools share "report"; a few say "sales" too: the best BM25 scores, the candidates
    tools = [_tool(f"report_{i}", "Make a report." + " sales" * (i % 3 == 0)) for i in range(80)]
    index = BM25Index.build(tools)
    bm25 = index.scores("sales report")
    candidates = index.match_index().candidates(bm25)
    assert 0 < len(candidates) <= MATCH_DEPTH
    assert (bm25[candidates] >= MATCH_FLOOR * bm25.max()).all()
    outside = np.setdiff1d(np.flatnonzero(bm25 > 0), candidates)
    assert bm25[outside].max() <= bm25[candidates].min()
    scores = index.match_scores("sales report")
    assert scores[outside].max() <= scores[candidates].min()  # BM25 order below them


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("book it for 2024-05-01", ("date",)),
        ("on March 3rd, at 9 pm", ("date", "time")),
        ("the 5th of june", ("date",)),
        ("next Tuesday", ("date",)),
        ("meet at 14:30", ("time",)),
        ("mail ann@example.com", ("email",)),
        ("open https://example.com", ("url",)),
        ("book a flight for 2 adults", ()),
        ("what a day", ()),
    ],
)
def test_request_kinds(text: str, kinds: tuple[str, ...]) -> None:
    assert request_kinds(text) == kinds


def test_a_value_favours_the_tool_that_takes_it() -> None:
    catalog = ToolCatalog(
        [
            *FILLER,
            _tool("book_table", "Reserve a table at a restaurant.", restaurant="Where."),
            _tool("book_table_on", "Reserve a table at a restaurant.", date="The day."),
        ]
    )
    assert catalog.search("Reserve a table at Chez Panisse")[0].name == "book_table"
    # BM25 alone still prefers book_table (shorter); the date tips it
    index = catalog.search_engine.index()
    bm25 = index.scores("Reserve a table at Chez Panisse on March 3rd")
    assert index.tools[int(np.argmax(bm25))].name == "book_table"
    assert catalog.search("Reserve a table at Chez Panisse on March 3rd")[0].name == (
        "book_table_on"
    )


def test_a_scoped_search_scores_the_features_of_the_tools_in_scope() -> None:
    # 60 out-of-scope tools outscore both in-scope ones on BM25: the features must still be
    # read for the in-scope ones, or the scope would rank by BM25 alone
    loud = [Tool(f"rain_{i}", "Forecast rain or shine.", domain="noise") for i in range(60)]
    quiet = [
        Tool("umbrella_advice", "Whether to take an umbrella in the rain.", domain="home"),
        Tool("garden_watering", "When to water the garden, after rain.", domain="home"),
    ]
    catalog = ToolCatalog([*loud, *quiet])
    index = catalog.search_engine.index()
    mask = index.scope_mask("home", None)
    query = "rain forecast"
    assert mask is not None
    scoped = index.match_scores(query, mask)
    assert (scoped[~mask] == 0).all()
    candidates, features = index.match_features(query)
    assert not set(np.flatnonzero(mask)) & set(candidates.tolist())  # unscoped: all noise
    positions = {t.name: i for i, t in enumerate(index.tools)}
    bm25 = index.scores(query)
    bm25[~mask] = 0
    for name in ("umbrella_advice", "garden_watering"):
        assert scoped[positions[name]] > bm25[positions[name]]  # features added


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0, 2.0, 3.5, 7.0]), min_size=1, max_size=60),
    st.integers(1, 25),
    st.booleans(),
)
def test_top_is_the_full_sort(values: list[float], limit: int, masked: bool) -> None:
    scores = np.array(values)
    mask = (np.arange(len(scores)) % 3 != 0) if masked else None
    expected_scores = scores.copy()
    if mask is not None:
        expected_scores[~mask] = 0
    order = np.lexsort((np.arange(len(scores)), -expected_scores))
    expected = [(int(i), float(expected_scores[i])) for i in order if expected_scores[i] > 0]
    assert BM25Index.top(scores.copy(), limit, mask) == expected[:limit]


def test_short_sentences_join_a_neighbour_instead_of_ranking_alone() -> None:
    text = "I'm looking for a Music event in New York for today. Can you find one for me?"
    assert split_query(text) == [text.rstrip("?")]
    assert split_query("Thanks! Book a flight to Paris. Then email the itinerary to Ann.") == [
        "Thanks! Book a flight to Paris",
        "email the itinerary to Ann",
    ]
    # within a sentence, "and" still splits two needs of two words each
    assert split_query("book a flight and email the itinerary") == [
        "book a flight",
        "email the itinerary",
    ]
