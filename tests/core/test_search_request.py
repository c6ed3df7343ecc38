"""Reading a request before ranking it: scaffolding, transcripts, quoted payload."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._search import BM25Matrix, tokenize
from toolmgmt_core._search.request import (
    CONTEXT_WEIGHT,
    PAYLOAD_WEIGHT,
    Request,
    read_request,
    request_terms,
)


def _catalog() -> ToolCatalog:
    return ToolCatalog(
        [
            Tool("book_flight", "Book a flight ticket to a destination.", domain="travel"),
            Tool("search_flights", "Search flights between two airports.", domain="travel"),
            Tool("cancel_order", "Cancel a customer order.", domain="shop"),
            Tool("send_email", "Send an email message to a customer.", domain="mail"),
            Tool("create_invoice", "Create an invoice for a customer.", domain="billing"),
            Tool("translate_text", "Translate text into another language.", domain="text"),
        ]
    )


TRANSCRIPT = (
    "System: You are a travel agent who books flights and searches flights for users.\n"
    "User: book a flight to Paris, the cheapest flight please\n"
    "Assistant: I booked flight AF123 to Paris.\n"
    "User: now cancel my order"
)


def test_a_transcript_is_ranked_by_its_last_user_turn() -> None:
    catalog = _catalog()
    # the earlier turns say "flight" five times; the last turn asks for something else
    assert catalog.search(TRANSCRIPT)[0].name == "cancel_order"
    # read as one bag of words, the flight tools would win: the reading is what decides
    assert catalog.search(TRANSCRIPT.replace(":", " said"))[0].name != "cancel_order"


def test_earlier_turns_stay_as_context() -> None:
    request = read_request(TRANSCRIPT)
    assert request.focus == "now cancel my order"
    assert "books flights" in request.context and "AF123" in request.context
    weights = dict(request_terms(TRANSCRIPT))
    assert weights["cancel"] == 1.0
    assert weights["flight"] == CONTEXT_WEIGHT


@pytest.mark.parametrize(
    ("text", "focus"),
    [
        ('"Book a flight to Paris."', "Book a flight to Paris."),
        ("'Book a flight'", "Book a flight"),
        ('{"input": "book a flight"}', "book a flight"),
        ('"input": "book a flight"', "book a flight"),
        ("```book a flight```", "```book a flight```"),  # a code block is not a wrapper
        ('"book" a "flight"', '"book" a "flight"'),  # two quotes, not one around everything
        ("Human: hi\nAI: hello, how can I help?\nHuman: cancel my order", "cancel my order"),
        ("<|user|>: cancel my order", "cancel my order"),
        ("USER: first\\nASSISTANT: ok\\nUSER: second", "second"),
    ],
)
def test_scaffolding_is_dropped(text: str, focus: str) -> None:
    assert read_request(text).focus == focus


def test_words_that_look_like_roles_inside_a_sentence_stay() -> None:
    text = "Filter the tickets by user: alice and show them"
    assert read_request(text) == Request(text)


def test_a_quoted_passage_is_payload_and_counts_less() -> None:
    catalog = _catalog()
    text = "Translate 'please email the invoice to the customer' into French"
    assert catalog.search(text)[0].name == "translate_text"
    weights = dict(request_terms(text))
    assert weights["translate"] == 1.0 and weights["invoice"] == PAYLOAD_WEIGHT
    # the same words outside quotes are the request's own
    assert dict(request_terms(text.replace("'", "")))["invoice"] == 1.0


def test_short_quotes_and_apostrophes_count_fully() -> None:
    assert all(w == 1.0 for _, w in request_terms("run the 'list_files' command"))
    assert all(w == 1.0 for _, w in request_terms("it's Bob's file, isn't it"))
    code = dict(request_terms("explain this: ```def add(a, b): return a + b```"))
    assert code["explain"] == 1.0 and code["add"] == PAYLOAD_WEIGHT


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_reading_never_fails_and_keeps_plain_text_whole(text: str) -> None:
    terms = request_terms(text)
    assert {w for _, w in terms} <= {1.0, CONTEXT_WEIGHT, PAYLOAD_WEIGHT}
    plain = not any(c in text for c in "\"'`{[:\u201c\u2018")
    if plain and text.strip():
        assert [t for t, _ in terms] == tokenize(text)


def test_bm25_scores_take_a_weight_per_term() -> None:
    matrix = BM25Matrix.build([["flight", "book"], ["order", "cancel"], ["flight", "search"]])
    ids = matrix.term_ids(["flight", "cancel"])
    plain = matrix.scores(ids)
    weighted = matrix.scores(ids, [0.5, 2.0])
    flight = matrix.scores(ids[:1])
    cancel = matrix.scores(ids[1:])
    assert np.allclose(weighted, 0.5 * flight + 2.0 * cancel)
    assert np.allclose(plain, flight + cancel)
    assert np.allclose(matrix.scores(ids[:1], [3.0]), 3.0 * flight)
    with pytest.raises(ValueError, match="one each"):
        matrix.scores(ids, [1.0])


def test_a_long_transcript_is_read_the_same_way() -> None:
    text = "System: " + "you book flights for travellers. " * 300 + "\nUser: cancel my order"
    assert len(text) > 4_000
    assert read_request(text).focus == "cancel my order"
    weights = dict(request_terms(text))
    assert weights["cancel"] == 1.0 and weights["flight"] == CONTEXT_WEIGHT
    assert _catalog().search(text)[0].name == "cancel_order"
